"""The look before a pass writes: rules that would clear every item.

A config that lost a job's fields (a wrong file, a job of the same name
elsewhere, a selector typo in every field) would otherwise turn each stored
item into `{}` one chunk after another, and nothing brings the old values
back but a crawl. So, before the first write, the pass reads its first
pages, parses them and writes nothing: when every page among them that had
a field would be left with none, the pass stops and says so, unless the
operator asked for it (`--force`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nadird.reextract.core import Redone
from nadird.reextract.pool import Extractors
from nadird.store.stored import PageStore

SAMPLE_HAD = 200  # pages that had fields: enough to judge the rules by
SAMPLE_READ = 5000  # pages read at most to find them (a store of errors first)


class WouldEmpty(Exception):
    """The rules would leave every sampled page that had fields with none."""

    def __init__(self, had: int) -> None:
        self.had = had
        super().__init__(
            f"the job's rules extract nothing from the {had} stored pages read that have "
            "fields; re-extracting would clear them (give --force to clear them anyway)"
        )


def has_fields(data: Any) -> bool:
    """Whether an item holds a value: its own markers (`_valid`, `_errors`)
    do not count, nor do empty values."""
    if not isinstance(data, dict):
        return False
    return any(
        not str(name).startswith("_") and value not in (None, "", [], {})
        for name, value in data.items()
    )


@dataclass
class Sample:
    read: int = 0
    had: int = 0  # pages whose stored item had a field
    kept: int = 0  # of those, the pages whose new item has one too

    @property
    def empties(self) -> bool:
        return self.had > 0 and self.kept == 0


async def sample(
    store: PageStore,
    job: str,
    extractors: Extractors,
    after: str | None,
    since: float | None,
    chunk: int,
) -> Sample:
    """Parse the pass's first pages (after `after`) without writing them."""
    seen = Sample()
    while seen.had < SAMPLE_HAD and seen.read < SAMPLE_READ:
        pages = await store.read_pages(job, after, since, chunk)
        todo = [p.record for p in pages if p.reason is None and p.record is not None]
        for record, verdict in zip(todo, await extractors.run(todo), strict=True):
            if isinstance(verdict, Redone) and has_fields(record.data):
                seen.had += 1
                seen.kept += has_fields(verdict.data)
        seen.read += len(pages)
        if len(pages) < chunk:
            break
        after = pages[-1].key
    return seen
