"""Group commit of the frontier's writes while results keep arriving.

A commit per results message cost more than everything else the master did
with the message, so the writes of every message handled in the next
COMMIT_INTERVAL go in one commit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

# Longest time admissions stay uncommitted while results keep arriving.
COMMIT_INTERVAL = 0.2


class GroupCommit:
    """Calls `commit` once, COMMIT_INTERVAL after the first write asked for it."""

    def __init__(self, commit: Callable[[], object]) -> None:
        self._commit = commit
        self._timer: asyncio.TimerHandle | None = None

    def soon(self) -> None:
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(COMMIT_INTERVAL, self._now)

    def cancel(self) -> None:
        """At stop: the state's own save commits what is left."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _now(self) -> None:
        self._timer = None
        self._commit()
