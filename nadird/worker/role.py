"""The worker as a daemon role: start, stop, and live reload."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from nadird.config import Config
from nadird.reload import needs_restart
from nadird.worker.agent import WorkerAgent

# What a SIGHUP may change on a running worker; the rest needs a restart.
LIVE = ("log_level", "shutdown_timeout", "master", "politeness", "jobs", "seeds", "store", "bloom")


class WorkerRole:
    def __init__(self, config: Config) -> None:
        self.agent = WorkerAgent(config)
        self.done = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        try:
            await self.agent.run(self._stop)
        finally:
            self.done.set()

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task

    def reload(self, new: Config, changed: dict[str, tuple[Any, Any]]) -> tuple[Config, list[str]]:
        restart = [key for key in changed if needs_restart(key, LIVE)]
        old = self.agent.config
        # Only the log level changes live on a worker for now; the rest keeps
        # running as it is until a restart.
        running = dataclasses.replace(
            old, log_level=new.log_level, shutdown_timeout=new.shutdown_timeout
        )
        return running, restart
