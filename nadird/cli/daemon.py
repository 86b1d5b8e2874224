"""Running a role as a service: event loop, signals, reload, systemd notify.

Signal handlers only put the signal in a queue; the main coroutine acts on it.
SIGHUP re-reads and validates the whole config, then applies what may change
live (an invalid file changes nothing). SIGTERM/SIGINT stop gracefully within
`shutdown_timeout`; a second one while stopping exits at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol, TypeVar

from nadird.common import logs, systemd
from nadird.common.errors import ConfigError, SupersededError
from nadird.common.logs import get_logger
from nadird.config import Config, load_config
from nadird.config.reload import changes

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


def run_role(coro: Coroutine[Any, Any, int]) -> int:
    """run_async for a daemon's master or worker. Once its role has stopped,
    the process is on its way out with its own status; closing the loop gives
    SIGTERM and SIGINT their default action back, which would end it as
    killed (-15) if one came during the rest of its exit (a worker that
    stopped by itself when its master said the crawl was done, signalled by
    systemd or a test a moment later). They are ignored from then on."""
    try:
        return run_async(coro)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)


class Role(Protocol):
    """What the daemon runs: a master or a worker."""

    done: asyncio.Event  # set when the role finished by itself

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def reload(self, new: Config, changed: dict[str, tuple[Any, Any]]) -> tuple[Config, list[str]]:
        """Apply what may change live of a validated config.

        Returns the config now in force and the changed keys that need a restart.
        """


class SignalQueue:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[signal.Signals] = asyncio.Queue()

    def install(self, *signals: signal.Signals) -> None:
        loop = asyncio.get_running_loop()
        for sig in signals:
            loop.add_signal_handler(sig, self.queue.put_nowait, sig)


def signal_exit_status(sig: signal.Signals) -> int:
    """What a shell expects of a process ended by `sig`: 128 + its number
    (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + int(sig)


class CrawlSignals:
    """For the all-in-one crawl: the first SIGINT, SIGTERM or SIGHUP asks it
    to stop (`received` says which); a second one calls `force` (which kills
    the workers) and exits at once."""

    def __init__(self, force: Callable[[], None] | None = None) -> None:
        self.stop = asyncio.Event()
        self.received: signal.Signals | None = None
        self.force = force

    def install(self) -> None:
        signals = SignalQueue()
        signals.install(signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
        task = asyncio.get_running_loop().create_task(self._watch(signals))
        _background.add(task)

    async def _watch(self, signals: SignalQueue) -> None:
        self.received = await signals.queue.get()
        log.info("stopping", signal=self.received.name)
        self.stop.set()
        again = await signals.queue.get()
        log.warning("stop_forced", signal=again.name)
        if self.force is not None:
            self.force()
        os._exit(signal_exit_status(again))


_background: set[asyncio.Task[None]] = set()


async def serve(role: Role, config: Config, config_path: str | None) -> int:
    signals = SignalQueue()
    signals.install(signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    await role.start()
    systemd.notify("READY=1")
    watchdog = asyncio.create_task(_watchdog())
    current = config
    while True:
        got = asyncio.ensure_future(signals.queue.get())
        finished = asyncio.ensure_future(role.done.wait())
        await asyncio.wait({got, finished}, return_when=asyncio.FIRST_COMPLETED)
        finished.cancel()
        if not got.done():
            got.cancel()
            break
        if got.result() != signal.SIGHUP:
            log.info("stopping", signal=got.result().name)
            break
        if config_path is not None:
            current = _reload(role, current, config_path)
    systemd.notify("STOPPING=1")
    failed = await _stop(role, signals, current.shutdown_timeout)
    watchdog.cancel()
    return 1 if failed else 0


async def _stop(role: Role, signals: SignalQueue, deadline: float) -> bool:
    """Stop the role; True if it had failed (e.g. a worker whose browser
    would not start), so that the process exits with status 1, not 0."""
    stopping = asyncio.ensure_future(asyncio.wait_for(role.stop(), deadline))
    while not stopping.done():
        again = asyncio.ensure_future(signals.queue.get())
        await asyncio.wait({stopping, again}, return_when=asyncio.FIRST_COMPLETED)
        if again.done() and again.result() in (signal.SIGTERM, signal.SIGINT):
            log.warning("stop_forced", signal=again.result().name)
            os._exit(1)
        again.cancel()
    error = stopping.exception()
    if isinstance(error, SupersededError):
        raise error  # its own exit status (cli/main.py), not restarted
    if isinstance(error, TimeoutError):
        # Not a clean stop: say where it was stuck, and exit non-zero.
        log.error("stop_deadline_passed", seconds=deadline, waiting=_stuck_tasks())
        return True
    if error is not None:
        log.error("role_failed", error=f"{type(error).__name__}: {error}"[:500])
        return True
    return False


def _stuck_tasks() -> list[str]:
    """Each unfinished task and the await chain it is suspended in (for a
    stop that hung): the innermost lines say what it waits for."""
    stuck = []
    for task in asyncio.all_tasks():
        if task is asyncio.current_task():
            continue
        chain: list[str] = []
        coro: Any = task.get_coro()
        while coro is not None and len(chain) < 12:
            frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
            if frame is not None:
                chain.append(f"{frame.f_code.co_name}:{frame.f_lineno}")
            coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
        stuck.append(f"{task.get_name()}: {' > '.join(chain) or '?'}")
    return sorted(stuck)[:50]


def _reload(role: Role, current: Config, path: str) -> Config:
    systemd.notify("RELOADING=1")
    try:
        new = load_config(Path(path))
    except ConfigError as exc:
        log.error("reload_rejected", error=str(exc))
        systemd.notify("READY=1")
        return current
    changed = changes(current, new)
    running, restart_keys = role.reload(new, changed)
    restart = set(restart_keys)
    for key, (old, value) in changed.items():
        if key in restart:
            log.warning("config_needs_restart", key=key, running=_short(old), file=_short(value))
        else:
            log.info("config_changed", key=key, old=_short(old), new=_short(value))
    if running.log_level != current.log_level:
        logs.set_level(running.log_level)
    systemd.notify("READY=1")
    log.info("reloaded", changed=len(changed), needs_restart=sorted(restart))
    return running


def _short(value: Any) -> Any:
    text = repr(value)
    return value if len(text) <= 200 else text[:200] + "..."


async def _watchdog() -> None:
    interval = systemd.watchdog_interval()
    if interval is None:
        return
    while True:
        systemd.notify("WATCHDOG=1")
        await asyncio.sleep(interval)


async def master_main(
    config: Config, config_path: str | None = None, rebuild_seen: bool = False
) -> int:
    from nadird.master.frontier.seen_rebuild import rebuild, snapshot_lost
    from nadird.master.service.role import MasterRole
    from nadird.master.service.sockets import MasterSockets
    from nadird.protocol.curve import MasterSecurity
    from nadird.store.open import open_store

    # Bound before the store and the state are opened: a worker connects to a
    # master that is still loading and waits for it (sockets.py).
    sockets = MasterSockets(config, MasterSecurity(config, config_path or "(config)"))
    try:
        store = open_store(config.store.uri, config.store)
        await store.open()
    except BaseException:
        sockets.close()
        raise
    try:
        try:
            rebuild_seen = rebuild_seen or snapshot_lost(config)
            seen = await rebuild(config, store) if rebuild_seen else None
            role = MasterRole(config, store, seen, config_path, sockets)
        except BaseException:
            sockets.close()  # the role's own from here on
            raise
        return await serve(role, config, config_path)
    finally:
        await store.close()


async def worker_main(config: Config, config_path: str | None = None) -> int:
    from nadird.worker.service.role import WorkerRole

    return await serve(WorkerRole(config, config_path), config, config_path)
