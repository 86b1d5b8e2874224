"""MongoStore's spool side (store.py's module doc says when it is used): a
batch goes to the local spool while MongoDB fails or while the spool holds
anything, and a background task replays the spool from its head into
MongoDB, with growing pauses between failed attempts, dead-lettering a
record that keeps failing on its own."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence

from pymongo.errors import PyMongoError

from nadird.common.errors import StoreError
from nadird.common.logs import get_logger
from nadird.store.base import PageRecord
from nadird.store.mongo.connect import one_line
from nadird.store.mongo.spool import DeadRecord, Spool, SpoolLocked

log = get_logger()


class SpoolReplay:
    """A base of MongoStore, which makes the spool and the events and writes
    to MongoDB (`_write_mongo`)."""

    # Records per replay round trip: the master's default batch size.
    REPLAY_RECORDS = 500
    # A record failing per document this many times in a row is dead-lettered.
    MAX_ATTEMPTS = 5
    # Pause after a failed replay, doubling up to the maximum.
    RETRY_MIN = 0.1
    RETRY_MAX = 5.0
    # How long close() and the read methods wait for the spool to drain.
    DRAIN_TIMEOUT = 10.0

    _spool: Spool
    _spool_locked: bool
    _kick: asyncio.Event
    _drained: asyncio.Event

    async def _write_mongo(
        self, records: Sequence[PageRecord]
    ) -> tuple[list[PageRecord], list[DeadRecord]]:
        raise NotImplementedError  # MongoStore's

    async def _open_existing_spool(self) -> None:
        # The spool file is created when first needed, so a store that only
        # reads (`nadird export`) leaves no file behind. One that exists is
        # opened now: it may hold batches to replay.
        if not self._spool.exists():
            return
        try:
            await self._spool.open()
        except SpoolLocked as exc:
            # Its master is running (this is `nadird export` or `crawl`
            # beside it): read without a spool; an outage then fails writes.
            self._spool_locked = True
            log.warning("mongo_spool_unavailable", error=str(exc))

    async def _ready_spool(self) -> None:
        if self._spool.is_open:
            return
        if self._spool_locked:
            raise StoreError(
                f"{self!r}: MongoDB is failing and spool {self._spool.path} "
                "is in use by another process"
            )
        await self._spool.open()

    async def _to_spool(self, records: Sequence[PageRecord], attempts: int = 0) -> None:
        await self._ready_spool()
        await self._spool.append(records, attempts)
        self._drained.clear()
        self._kick.set()

    # Replaying.

    async def _replay_loop(self) -> None:
        pause = self.RETRY_MIN
        failing_since: float | None = None
        while True:
            await self._kick.wait()
            try:
                await self._replay_once()
            except Exception as exc:  # this task must outlive any failure
                if failing_since is None:
                    failing_since = time.monotonic()
                    level = "warning" if isinstance(exc, PyMongoError | StoreError) else "error"
                    getattr(log, level)("mongo_replay_failed", error=one_line(str(exc), 200))
                await asyncio.sleep(pause)
                pause = min(pause * 2, self.RETRY_MAX)
                continue
            pause = self.RETRY_MIN
            if failing_since is not None:
                log.info("mongo_back", outage_s=round(time.monotonic() - failing_since, 3))
                failing_since = None
            if not self._spool.records:
                self._kick.clear()
                self._drained.set()
                log.info("mongo_spool_drained")

    async def _replay_once(self) -> None:
        chunk = await self._spool.head(self.REPLAY_RECORDS)
        if chunk is None:
            return
        retry, dead = await self._write_mongo(chunk.records)
        attempts = chunk.attempts + 1
        if retry and attempts >= self.MAX_ATTEMPTS:
            dead += [DeadRecord(r, f"still failing after {attempts} attempts") for r in retry]
            retry = []
        await self._spool.settle(chunk.last_seq, retry, attempts, dead)

    async def _wait_drained(self) -> None:
        """Let the spool drain (bounded) so a read sees every acknowledged write."""
        if not self._spool.records:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._drained.wait(), self.DRAIN_TIMEOUT)
