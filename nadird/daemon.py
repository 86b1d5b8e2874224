"""Running a role as a long-lived process: event loop choice and stop signals.

Signal handlers only set an event; the main coroutine does the stopping. A
second SIGTERM/SIGINT while stopping exits at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from nadird.config import Config
from nadird.logs import get_logger

T = TypeVar("T")
log = get_logger()


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run on uvloop when it is installed, else on the default loop."""
    factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    try:
        import uvloop

        factory = uvloop.new_event_loop
    except ImportError:
        pass
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coro)


def stop_on_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    received = 0

    def on_signal() -> None:
        nonlocal received
        received += 1
        if received > 1:
            os._exit(1)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)


async def _first(*waits: Awaitable[Any]) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        task.cancel()


async def master_main(config: Config, rebuild_seen: bool = False) -> int:
    from nadird.master.seen_rebuild import rebuild
    from nadird.master.server import Master
    from nadird.store.open import open_store

    store = open_store(config.store.uri)
    await store.open()
    seen = await rebuild(config, store) if rebuild_seen else None
    master = Master(config, store, seen)
    stop = asyncio.Event()
    stop_on_signals(stop)
    await master.start()
    if config.master.exit_when_done:
        await _first(stop.wait(), master.done.wait())
    else:
        await stop.wait()
    await master.stop()
    await store.close()
    return 0


async def worker_main(config: Config) -> int:
    from nadird.worker.agent import WorkerAgent

    agent = WorkerAgent(config)
    stop = asyncio.Event()
    stop_on_signals(stop)
    await agent.run(stop)
    return 0
