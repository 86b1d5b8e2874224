"""Trimming the page history to a job's retention (job/history.py), a step
at a time.

A step walks the job's URLs in order from a cursor (the last URL it
finished), reads the times of up to URLS_PER_STEP URLs' versions and
deletes at most `limit` versions, so one step is a short job for the store
(SQLite: one transaction of a few milliseconds on the store's thread, which
the writer waits behind once at most). A URL with more versions to go than
a step may delete is finished by the steps after it: the cursor moves past
a URL only once it is done. The step that reaches the last URL ends the
round (`after` None).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

URLS_PER_STEP = 100  # URLs whose versions a step reads, at most
TRIM_ROWS = 500  # versions a step deletes, at most


@dataclass(frozen=True, slots=True)
class Keep:
    """What to keep of one job's history, at one moment."""

    job: str
    before: float | None = None  # versions fetched before this time go...
    versions: int | None = None  # ...and all but this many newest of a URL
    # (each URL's latest version stays whatever the rules)


@dataclass(frozen=True, slots=True)
class TrimStep:
    trimmed: int  # versions deleted
    after: str | None  # the cursor for the next step; None: the round is over


def doomed(versions: Sequence[tuple[Any, float]], keep: Keep) -> list[Any]:
    """The ids to delete of one URL's versions, given newest first as (id,
    time): never the first (the latest), then any beyond `keep.versions` or
    older than `keep.before`."""
    gone = []
    for rank, (key, at) in enumerate(versions):
        if rank == 0:
            continue
        too_many = keep.versions is not None and rank >= keep.versions
        too_old = keep.before is not None and at < keep.before
        if too_many or too_old:
            gone.append(key)
    return gone


def plan_step(
    by_url: Sequence[tuple[str, list[Any]]], after: str | None, limit: int, full: bool
) -> tuple[list[Any], TrimStep]:
    """From the doomed ids of the step's URLs (in URL order): the ids to
    delete now, and the step's outcome. `full`: the step read as many URLs
    as it may, so more may follow the last."""
    ids: list[Any] = []
    for url, gone in by_url:
        room = limit - len(ids)
        ids.extend(gone[:room])
        if len(gone) > room:  # this URL is finished by the next step
            return ids, TrimStep(len(ids), after or "")
        after = url
    return ids, TrimStep(len(ids), after if full else None)


@runtime_checkable
class TrimsHistory(Protocol):
    """A store whose history the master trims (SQLite, MongoDB)."""

    async def trim_history(self, keep: Keep, after: str | None, limit: int) -> TrimStep:
        """One step over `keep.job`'s URLs after `after` (None: the first)."""
