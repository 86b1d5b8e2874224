"""Where the parsing runs: a thread beside the event loop, or N processes.

lxml releases little of the GIL, so one process parses on one core; with
`--jobs N` a chunk is cut into N slices parsed by N processes at once. Each
process compiles the job's rules once, at start (compiled rules hold
functions and do not travel between processes; the job's plain form does).
The processes ignore SIGINT: Ctrl-C is the runner's to handle, which lets
the chunk in progress finish and be written with its checkpoint.
"""

from __future__ import annotations

import asyncio
import signal
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from nadird.job.spec import Job
from nadird.reextract.core import Redone, Rules, redo
from nadird.store.base import PageRecord

Verdict = Redone | str

_rules: Rules | None = None  # a pool process's own, set by _start


def redo_all(records: list[PageRecord], rules: Rules) -> list[Verdict]:
    return [redo(record, rules) for record in records]


def _start(job: dict[str, Any], html_types: list[str]) -> None:
    global _rules
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _rules = Rules.of(Job.from_wire(job), html_types)


def _redo_slice(records: list[PageRecord]) -> list[Verdict]:
    assert _rules is not None, "pool process not started"
    return redo_all(records, _rules)


class Extractors:
    """Runs `redo` over a chunk's records, in order, on one or N cores."""

    def __init__(self, rules: Rules, processes: int = 1) -> None:
        self._rules = rules
        self._processes = processes
        self._pool: ProcessPoolExecutor | None = None
        if processes > 1:
            args = (rules.job.to_wire(), sorted(rules.html_types))
            self._pool = ProcessPoolExecutor(processes, initializer=_start, initargs=args)

    async def run(self, records: list[PageRecord]) -> list[Verdict]:
        if self._pool is None:
            return await asyncio.to_thread(redo_all, records, self._rules)
        loop = asyncio.get_running_loop()
        size = -(-len(records) // self._processes)  # ceiling: N slices at most
        slices = [records[i : i + size] for i in range(0, len(records), size)]
        done = await asyncio.gather(
            *(loop.run_in_executor(self._pool, _redo_slice, part) for part in slices)
        )
        return [verdict for part in done for verdict in part]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
