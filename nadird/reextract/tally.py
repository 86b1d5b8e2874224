"""What a re-extraction did, counted, and the progress line that shows it.

The counts survive an interruption: they travel in the checkpoint, so the
report of a resumed run covers the whole pass, not only its last part.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from nadird.common.logs import get_logger
from nadird.common.progress import Console
from nadird.reextract.core import REFETCHED, Redone, is_invalid
from nadird.store.stored import WRITE_FAILED, PageUpdate, StoredPage, UpdateOutcome
from nadird.worker.parse.article.fields import ARTICLE_ERROR

log = get_logger()
PROGRESS_INTERVAL = 1.0  # seconds between progress lines, at most


@dataclass
class Tally:
    read: int = 0
    changed: int = 0
    became_valid: int = 0
    became_invalid: int = 0
    unchanged: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    versions: int = 0  # history versions appended (jobs that revisit)
    # Pages whose article fields were given up (`article:` jobs), by reason.
    article_given_up: dict[str, int] = field(default_factory=dict)
    # Pages whose near_duplicate_of the finished pass changed (near_dups.py), by action.
    near_duplicates: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, pages: int = 1) -> None:
        if pages:
            self.skipped[reason] = self.skipped.get(reason, 0) + pages

    def verdict(self, page: StoredPage, verdict: Redone | str | None) -> PageUpdate | None:
        """Count one page read; the update to write when its item changed."""
        self.read += 1
        record = page.record
        if isinstance(verdict, str) or verdict is None or record is None:
            self.skip(page.reason or (verdict if isinstance(verdict, str) else "unreadable"))
            return None
        reason = verdict.data.get(ARTICLE_ERROR)
        if isinstance(reason, str):
            self.article_given_up[reason] = self.article_given_up.get(reason, 0) + 1
        now = (verdict.data, verdict.signature, verdict.item_key, verdict.simhash)
        if now == (record.data, record.signature, record.item_key, record.simhash):
            self.unchanged += 1
            return None
        new = dataclasses.replace(
            record,
            data=verdict.data,
            signature=verdict.signature,
            item_key=verdict.item_key,
            simhash=verdict.simhash,
        )
        return PageUpdate(page, new)

    def written(self, updates: list[PageUpdate], outcome: UpdateOutcome) -> None:
        """Count a chunk's updates as the store applied them."""
        landed = set(outcome.landed)
        for update in updates:
            if update.page.key not in landed or update.page.record is None:
                continue
            self.changed += 1
            was, now = is_invalid(update.page.record.data), is_invalid(update.record.data)
            self.became_valid += was and not now
            self.became_invalid += now and not was
        self.skip(REFETCHED, outcome.refetched)
        self.skip(WRITE_FAILED, outcome.failed)
        self.versions += outcome.versions

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, raw: Any) -> Tally:
        """The counts a checkpoint carried; fresh ones if it carried none readable."""
        try:
            tally = cls(**raw)
        except TypeError:
            return cls()
        readable = all(
            isinstance(counts, dict)
            for counts in (tally.skipped, tally.article_given_up, tally.near_duplicates)
        )
        return tally if readable else cls()


class Progress:
    """At most one progress line a second on stderr: redrawn in place on a
    terminal, a `reextract_progress` log event otherwise."""

    def __init__(self, console: Console, interval: float = PROGRESS_INTERVAL) -> None:
        self._console = console
        self._interval = interval
        self._started = time.monotonic()
        self._last = 0.0
        self._before = 0  # pages an interrupted run read: not part of this run's rate

    def begin(self, already_read: int) -> None:
        self._started, self._before = time.monotonic(), already_read

    def show(self, tally: Tally, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self._last < self._interval:
            return
        self._last = now
        elapsed = now - self._started
        rate = (tally.read - self._before) / elapsed if elapsed > 0 else 0.0
        if self._console.isatty():
            skipped = sum(tally.skipped.values())
            self._console.show(
                f"read {tally.read:>8} | changed {tally.changed:>7} | unchanged "
                f"{tally.unchanged:>7} | skipped {skipped:>6} | {rate:>7.1f} p/s"
            )
            if final:
                self._console.end()
            return
        log.info(
            "reextract_progress",
            read=tally.read,
            changed=tally.changed,
            unchanged=tally.unchanged,
            skipped=sum(tally.skipped.values()),
            pages_per_s=round(rate, 1),
            final=final,
        )
