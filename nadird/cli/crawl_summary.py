"""What `nadird crawl` says when it ends: the summary line, its exit status, and hints.

Failures count as errors whether they were stored (a refused address, a
robots.txt exclusion) or ran out of retries (dead letters, never stored): an
operator reading `"errors": 0` must be able to trust that nothing failed. A
crawl that fetched nothing because every URL failed exits 1 and says so.
"""

from __future__ import annotations

import json
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from nadird.cli.argtypes import out_format
from nadird.cli.daemon import signal_exit_status
from nadird.common.errors import ErrorKind
from nadird.common.http_status import status_class
from nadird.store.backend import Store
from nadird.store.base import PageRecord
from nadird.store.export import export_to
from nadird.store.items import KeyedItem
from nadird.store.uri import describe_store_uri

EXIT_NOTHING_FETCHED = 1


class SinceStart:
    """The store as the summary and `--out` see it: the records this crawl
    fetched (a store given with --store may hold older ones)."""

    def __init__(self, store: Store, since: float) -> None:
        self._store = store
        self._since = since

    async def open(self) -> None:
        await self._store.open()

    async def write(self, records: Sequence[PageRecord]) -> None:
        await self._store.write(records)

    async def upsert_items(self, records: Sequence[PageRecord]) -> int:
        return await self._store.upsert_items(records)

    def iter_items(self, job: str | None = None) -> AsyncIterator[KeyedItem]:
        # Keyed items merge fetches of every crawl: they are not filtered by time.
        return self._store.iter_items(job)

    async def count(self, job: str | None = None) -> int:
        return sum([1 async for _ in self.iter_records(job)])

    async def iter_records(
        self, job: str | None = None, since: float | None = None
    ) -> AsyncIterator[PageRecord]:
        start = self._since if since is None else max(self._since, since)
        async for record in self._store.iter_records(job, start):
            yield record

    async def close(self) -> None:
        await self._store.close()

    @property
    def pages_added(self) -> int:
        return self._store.pages_added

    @property
    def spool_records(self) -> int:
        return self._store.spool_records

    @property
    def backpressure(self) -> bool:
        return self._store.backpressure


@dataclass
class Tally:
    """This run's records, counted as the master's status counts them:
    `pages` have no error (a 404 is a page), `errors` have one; fetched
    pages (those with a status) are counted again by status class."""

    pages: int = 0
    stored_errors: int = 0
    http_status: Counter[str] = field(default_factory=Counter)
    error_kinds: Counter[str] = field(default_factory=Counter)


async def summarize(store: Store, started: float, out: str | None) -> Tally:
    """Count (and export, in the format `out`'s extension names) what this crawl stored."""
    crawled = SinceStart(store, started)
    tally = Tally()
    async for record in crawled.iter_records():
        if record.error:
            tally.stored_errors += 1
            tally.error_kinds[str(record.error_kind or ErrorKind.UNKNOWN)] += 1
        else:
            tally.pages += 1
        if record.status:
            tally.http_status[status_class(record.status)] += 1
    if out is not None:
        await export_to(crawled, out, out_format(out))
    return tally


@dataclass
class Finish:
    """How a crawl ended: complete, stopped by a signal, or failed."""

    complete: bool
    signal: signal.Signals | None
    failed: BaseException | None
    timed_out: bool = False  # --for ran out: a planned end
    nothing_fetched: bool = False  # it ended by itself, and every URL it tried failed

    def exit_status(self) -> int:
        if self.failed is not None:
            return 1
        if self.signal is not None:
            return signal_exit_status(self.signal)
        if self.nothing_fetched:
            return EXIT_NOTHING_FETCHED
        return 0 if self.complete or self.timed_out else 1

    def judge(self, tally: Tally, dead_letters: int) -> None:
        """Set `nothing_fetched` for a crawl that ended by itself (complete,
        or at --for's end) with errors and not one page."""
        ended = self.failed is None and self.signal is None
        errors = tally.stored_errors + dead_letters
        self.nothing_fetched = ended and tally.pages == 0 and errors > 0


def explain(tally: Tally, dead_letters: int, allow_private: bool, err: TextIO = sys.stderr) -> None:
    """The lines that tell an operator why a crawl fetched nothing, and how
    to crawl the addresses it refused."""
    blocked = tally.error_kinds.get(ErrorKind.BLOCKED_ADDRESS, 0)
    if blocked and not allow_private:
        print(
            f"nadird crawl: {blocked} URLs were refused (blocked_address): loopback, private "
            "and link-local addresses are crawled only with --allow-private",
            file=err,
        )
    if tally.pages or not (tally.stored_errors or dead_letters):
        return
    kinds = dict(tally.error_kinds.most_common())
    if dead_letters:
        kinds["dead letter (retries ran out)"] = dead_letters
    why = ", ".join(f"{kind}: {count}" for kind, count in kinds.items())
    print(f"nadird crawl: nothing was fetched: every URL failed ({why})", file=err)


def summary_line(
    finish: Finish, tally: Tally, facts: dict[str, Any], extra: dict[str, Any]
) -> dict[str, Any]:
    """The summary as printed: `facts` are the master's counts (dead_letters,
    retries...), `extra` what follows them (seconds, store, out...)."""
    dead = int(facts.get("dead_letters", 0))
    return {
        "event": "crawl_summary",
        "complete": finish.complete,
        "pages": tally.pages,
        "errors": tally.stored_errors + dead,
        "http_status": dict(sorted(tally.http_status.items())),
        **facts,
        **extra,
        "nothing_fetched": finish.nothing_fetched,
        "signal": finish.signal.name if finish.signal is not None else None,
    }


def forced_summary(
    stats: Mapping[str, int], seconds: float, store: str, first: signal.Signals | None
) -> dict[str, Any]:
    """The summary of a crawl stopped by a second signal, which exits at
    once: the master's counts so far (`"forced": true`), for the store is
    not read again and the results still in flight are lost."""
    dead = stats.get("dead_letters", 0)
    return {
        "event": "crawl_summary",
        "complete": False,
        "forced": True,
        "pages": stats.get("pages_ok", 0),
        "errors": stats.get("pages_error", 0) + dead,
        "dead_letters": dead,
        "retries": stats.get("retries", 0),
        "seconds": round(seconds, 3),
        "store": describe_store_uri(store),
        "signal": first.name if first is not None else None,
    }


def print_summary(summary: dict[str, Any], out: TextIO = sys.stdout) -> None:
    print(json.dumps(summary), file=out, flush=True)
