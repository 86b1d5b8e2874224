"""The store interface every backend implements (embedded SQLite, MongoDB).

The store is keyed by URL fingerprint: writing a record whose fingerprint is
already stored replaces it, so a replayed or late result is a no-op in effect
(at-least-once fetch, exactly-once store). `write` returns only once the
records are durable; that return is what lets the master forget the URLs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from nadird.common.errors import ErrorKind
from nadird.common.record import (
    Cell,
    PageContent,
    PageFetch,
    RecordJob,
    fact,
    fact_of,
    facts,
    stored_kind,
)


@dataclass(slots=True)
class PageRecord(PageContent, RecordJob, PageFetch):
    """A stored page: the facts declared in nadird.common.record, the job and the
    worker node that fetched it."""

    node: str | None = field(default=None, metadata=fact(Cell.TEXT, export=False))

    def __post_init__(self) -> None:
        # Stores and spooled batches give the kind back as its name.
        kind = self.error_kind
        if kind is not None and type(kind) is not ErrorKind:
            self.error_kind = stored_kind(kind)

    def export_dict(self) -> dict[str, Any]:
        """The JSON shape shared by `nadird export` and `nadird crawl --out`."""
        return dict(zip(EXPORTED, _exported(self), strict=True))


def kind_from_text(record: PageRecord) -> PageRecord:
    """A record stored before `error_kind` was a field (a MongoDB document, a
    spooled batch), given the kind its error text names, "kind: detail".
    SQLite rows get theirs in the schema migration."""
    if record.error is not None and record.error_kind is None:
        record.error_kind = ErrorKind.of_message(record.error)
    return record


# Every record field must say how it is stored: a field without a Fact would
# silently be left out of SQLite and MongoDB.
_undeclared = [f.name for f in fields(PageRecord) if fact_of(f) is None]
if _undeclared:
    raise TypeError(f"PageRecord fields without a Fact: {', '.join(_undeclared)}")

FIELD_NAMES = tuple(f.name for f in fields(PageRecord))
# What `nadird export` shows, in declaration order (fp, body and node stay in).
EXPORTED = tuple(f.name for f, declared in facts(PageRecord) if declared.export)
_exported = attrgetter(*EXPORTED)
