"""The worker as a daemon role: start, stop, and live reload."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from nadird.config import Config
from nadird.config.reload import needs_restart
from nadird.worker.service.agent import WorkerAgent

# Fetch settings read afresh for every bag or request: they change live.
# Connection-level ones (pool, resolver, address policy, proxies, user agent,
# connect/read timeouts) are fixed when the session is made: restart.
FETCH_LIVE = (
    "total_timeout",
    "max_redirects",
    "max_body_bytes",
    "max_decoded_bytes",
    "store_body_bytes",
    "store_headers",
    "html_types",
    "strip_params",
    "robots",
    "throttle",
    "traps",
)
# What a SIGHUP may change on a running worker; the rest needs a restart.
# Master-only sections are listed so that editing them reports nothing here.
LIVE = (
    "log_level",
    "shutdown_timeout",
    "master",
    "politeness",
    "jobs",
    "seeds",
    "store",
    "bloom",
    "api",
    *(f"fetch.{key}" for key in FETCH_LIVE),
)


class WorkerRole:
    def __init__(self, config: Config, source: str | None = None) -> None:
        self.agent = WorkerAgent(config, source or "(config)")
        self.done = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.agent.http is not None:
            # Before the agent runs, so that a port in use ends the start
            # (BindError: exit status 2), not the run (status 1, restarted).
            await self.agent.http.start()
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
        fetch = dataclasses.replace(
            old.fetch, **{key: getattr(new.fetch, key) for key in FETCH_LIVE}
        )
        running = dataclasses.replace(
            old, log_level=new.log_level, shutdown_timeout=new.shutdown_timeout, fetch=fetch
        )
        self.agent.apply_config(running)
        return running, restart
