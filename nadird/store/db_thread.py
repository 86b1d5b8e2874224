"""A SQLite connection owned by one private thread.

sqlite3 calls block, so the stores keep their connection on a one-thread
executor and reach it only through `run`: the event loop (which also serves
the workers' sockets) never waits on disk. One thread, one connection:
sqlite3's `check_same_thread` guard stays on and proves nothing else touches
it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from nadird.common.errors import StoreError

_T = TypeVar("_T")


class DbThread:
    """`what` names the database in errors ("spool" -> "PATH: spool: ...")."""

    def __init__(self, path: str, what: str) -> None:
        self.path = path
        self._what = what
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None

    @property
    def is_open(self) -> bool:
        return self._executor is not None

    async def open(self, connect: Callable[[], sqlite3.Connection]) -> None:
        """Run `connect` on the new thread; its connection is the one `run` uses."""
        if self._executor is not None:
            return
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"nadird-{self._what}")
        loop = asyncio.get_running_loop()
        try:
            self._conn = await loop.run_in_executor(executor, connect)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        self._executor = executor

    async def run(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Call `fn(*args)` on the thread; sqlite3 and OS errors become StoreError."""
        if self._executor is None:
            raise StoreError(f"{self.path}: {self._what} is not open")
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, fn, *args)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.path}: {self._what}: {exc}") from exc

    def conn(self) -> sqlite3.Connection:
        """The connection, for functions that `run` calls (on the thread only)."""
        if self._conn is None:
            raise StoreError(f"{self.path}: {self._what} is not open")
        return self._conn

    async def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is None:
            return
        loop = asyncio.get_running_loop()
        try:
            # Queued behind any call still in flight, so a write finishes (and
            # commits) before the connection goes away.
            await loop.run_in_executor(executor, self._close_sync)
        finally:
            # The queue is empty by now, so this only joins an idle thread.
            executor.shutdown(wait=True)

    def _close_sync(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
