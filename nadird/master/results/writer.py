"""The buffered store writer on the master.

Results are buffered and written in one store call per batch, by size or by
time, whichever comes first: one transaction per batch instead of one per page.
`pending` counts records not yet durable, so the master can tell when the crawl
is really finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence

from nadird.common.logs import get_logger
from nadird.common.waits import wait_set
from nadird.master.observe.health import StateHealth
from nadird.store.backend import Store
from nadird.store.base import PageRecord

log = get_logger()
# Store writes' worth of records waiting before the store counts as behind.
BEHIND_BATCHES = 20
STORE = "store"  # its name in StateHealth


class ResultWriter:
    def __init__(
        self,
        store: Store,
        flush_size: int,
        flush_interval: float,
        on_durable: Callable[[Sequence[PageRecord]], None] | None = None,
        health: StateHealth | None = None,
    ) -> None:
        self.store = store
        # Told of each failed and successful write: it logs the first failure
        # once and holds dispatch until the store takes writes again.
        self.health = health
        self._flush_size = flush_size
        self._flush_interval = flush_interval
        self._on_durable = on_durable
        self._buffer: list[PageRecord] = []
        self._writing = 0
        self._kick = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.written = 0
        self._behind = False
        self.failures = 0

    def configure(self, flush_size: int, flush_interval: float) -> None:
        self._flush_size = flush_size
        self._flush_interval = flush_interval

    def behind(self) -> bool:
        """True from BEHIND_BATCHES store writes' worth of records waiting
        until half as many: the store is slower than the workers, and more
        work would only grow the master's memory (the master then leases no
        new bags). The gap between the two marks keeps it from flapping."""
        batches = self.pending / self._flush_size
        self._behind = batches > BEHIND_BATCHES / 2 if self._behind else batches >= BEHIND_BATCHES
        return self._behind

    @property
    def pending(self) -> int:
        return len(self._buffer) + self._writing

    def add(self, records: Sequence[PageRecord]) -> None:
        self._buffer.extend(records)
        if len(self._buffer) >= self._flush_size:
            self._kick.set()

    def flush_soon(self) -> None:
        """Write what is buffered now: no more results are on their way to
        fill the batch (no lease is out), so waiting gains nothing."""
        if self._buffer:
            self._kick.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="store-writer")

    async def _run(self) -> None:
        while True:
            await wait_set(self._kick, self._flush_interval)
            self._kick.clear()
            await self.flush()

    async def flush(self) -> None:
        while self._buffer:
            batch = self._buffer[: self._flush_size]
            del self._buffer[: self._flush_size]
            self._writing += len(batch)
            try:
                await self._write(batch)
            finally:
                self._writing -= len(batch)

    async def _write(self, batch: list[PageRecord]) -> None:
        started = time.monotonic()
        try:
            await self.store.write(batch)
        except Exception as exc:
            # Keep the batch: it is retried at the next flush, nothing is lost.
            self.failures += 1
            self._buffer[:0] = batch
            if self.health is not None:
                self.health.failed(STORE, exc)
            else:
                log.error("store_write_failed", error=str(exc), records=len(batch))
            await asyncio.sleep(min(5.0, self._flush_interval * 2))
            return
        if self.health is not None:
            self.health.ok(STORE)
        self.written += len(batch)
        log.debug("store_flush", records=len(batch), ms=round(1000 * (time.monotonic() - started)))
        if self._on_durable is not None:
            self._on_durable(batch)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.flush()
