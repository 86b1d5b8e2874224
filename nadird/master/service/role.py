"""The master as a daemon role: start, stop, and live reload."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from nadird.common.errors import StateError, SupersededError
from nadird.common.logs import get_logger
from nadird.config import Config
from nadird.config.reload import needs_restart
from nadird.master.frontier.seen import SeenSet
from nadird.master.service.server import Master
from nadird.master.service.sockets import MasterSockets
from nadird.store.backend import Store

log = get_logger()

# What a SIGHUP may change on a running master. Everything else under the
# master's sections (bind addresses, state dir, store URI, Bloom sizing,
# lease timing that workers were told) needs a restart.
LIVE = (
    "log_level",
    "shutdown_timeout",
    "politeness",
    "jobs",
    "seeds",
    "master.bag_size",
    "master.retry_base_delay",
    "master.retry_max_delay",
    "master.max_queued_per_domain",
    "master.max_queued",
    "master.dead_letter_poll",
    "master.node_timeout",
    "master.late_result_window",
    "master.snapshot_interval",
    "master.exit_when_done",
    "master.state_retry_delay",
    "master.state_retry_max_delay",
    "master.state_give_up_after",
    "master.revisit_allocate_interval",
    "master.history_trim_interval",
    "store.flush_size",
    "store.flush_interval",
    "security.worker_keys",
    "security.worker_keys_dir",
    # Rules and channels (Alerts.reload); a channel that cannot start keeps them all.
    "alerts",
    # Sections only workers read: nothing for the master to do.
    "worker",
    "fetch",
)


class MasterRole:
    def __init__(
        self,
        config: Config,
        store: Store,
        seen: SeenSet | None = None,
        source: str | None = None,
        sockets: MasterSockets | None = None,
    ) -> None:
        # The config file's path, named in every error about its keys.
        self.source = source or "(config)"
        self.master = Master(config, store, seen, self.source, sockets)
        self.done = asyncio.Event()
        self._watch: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.master.start()
        self._watch = asyncio.create_task(self._finish_when_done())

    async def _finish_when_done(self) -> None:
        while True:
            finished = asyncio.ensure_future(self.master.done.wait())
            failed = asyncio.ensure_future(self.master.failed.wait())
            await asyncio.wait({finished, failed}, return_when=asyncio.FIRST_COMPLETED)
            finished.cancel()
            failed.cancel()
            if self.master.failed.is_set() or self.master.config.master.exit_when_done:
                self.done.set()
                return
            await asyncio.sleep(1.0)

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
        await self.master.stop()
        superseded = self.master.replica_superseded()
        if superseded is not None:
            raise SupersededError(superseded)  # exit status 3, not restarted
        self.master.loops.raise_if_failed()  # a loop ended: exit status 1, restarted
        reason = self.master.unsaved or self.master.health.fatal
        if reason is not None:
            raise StateError(reason)  # exit status 1, the reason logged

    def reload(self, new: Config, changed: dict[str, tuple[Any, Any]]) -> tuple[Config, list[str]]:
        restart = [key for key in changed if needs_restart(key, LIVE)]
        running = live_part(self.master.config, new)
        self.master.security.reload(new, self.source)
        if not self.master.alerts.reload(new.alerts, self.master):
            running = dataclasses.replace(running, alerts=self.master.config.alerts)
        self.master.apply_config(running)
        return running, restart


def live_part(old: Config, new: Config) -> Config:
    """The running config with only the live-changeable keys taken from `new`."""
    master_fields = {k.split(".", 1)[1] for k in LIVE if k.startswith("master.")}
    master = dataclasses.replace(
        old.master, **{name: getattr(new.master, name) for name in master_fields}
    )
    store = dataclasses.replace(
        old.store, flush_size=new.store.flush_size, flush_interval=new.store.flush_interval
    )
    return dataclasses.replace(
        old,
        log_level=new.log_level,
        shutdown_timeout=new.shutdown_timeout,
        politeness=new.politeness,
        jobs=new.jobs,
        seeds=new.seeds,
        master=master,
        store=store,
        worker=new.worker,
        fetch=new.fetch,
        alerts=new.alerts,
        security=dataclasses.replace(
            old.security,
            worker_keys=new.security.worker_keys,
            worker_keys_dir=new.security.worker_keys_dir,
        ),
    )
