"""The master process: its life cycle, the dispatch loop and housekeeping.

The decisions live in MasterCore and the state directory's files in StateDir
(state_dir.py); this module runs the timers, traffic.py moves the messages'
bytes. What the API and the console read is in reads.py.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Sequence
from typing import Any

import zmq
import zmq.asyncio

from nadird.common.errors import BindError, ConfigError, SupersededError
from nadird.common.logs import get_logger
from nadird.common.waits import wait_set
from nadird.config import Config
from nadird.job.request import RequestSpec
from nadird.master.alerts.service import Alerts
from nadird.master.archive.service import Archive
from nadird.master.core import MasterCore
from nadird.master.frontier.seen import SeenSet
from nadird.master.frontier.seen_rebuild import load_seen
from nadird.master.leasing.lease_mark import wall_of
from nadird.master.leasing.login_sessions import SessionBook
from nadird.master.observe.history import StatsHistory
from nadird.master.results.retention import HistoryRetention
from nadird.master.results.writer import ResultWriter
from nadird.master.revisits.catch_up import catch_up
from nadird.master.service import seeds
from nadird.master.service.api import ApiServer
from nadird.master.service.backpressure import BACKPRESSURE_RECHECK, Backpressure
from nadird.master.service.group_commit import GroupCommit
from nadird.master.service.heard import HeardClock
from nadird.master.service.loops import LoopGuard
from nadird.master.service.peers import PeerProbe
from nadird.master.service.reads import MasterReads
from nadird.master.service.replica import Replicator
from nadird.master.service.sockets import MasterSockets
from nadird.master.service.state_dir import StateDir
from nadird.master.service.traffic import MasterTraffic
from nadird.master.state.files import FRONTIER_FILE, ROBOTS_FILE, SEEN_FILE
from nadird.master.view import status
from nadird.protocol.curve import MasterSecurity
from nadird.protocol.messages import Shutdown
from nadird.store.backend import Store

log = get_logger()
__all__ = ["FRONTIER_FILE", "ROBOTS_FILE", "SEEN_FILE", "Master", "load_seen"]


class Master(MasterTraffic, MasterReads):
    """The master process; as MasterView, what the API and status reports see."""

    def __init__(
        self,
        config: Config,
        store: Store,
        seen: SeenSet | None = None,
        source: str = "(config)",
        sockets: MasterSockets | None = None,
    ) -> None:
        self.config = config
        # Bound before the state was loaded (the daemon's, sockets.py), or at start.
        self.sockets = sockets
        self.security = sockets.security if sockets else MasterSecurity(config, source)
        self.state = StateDir(config)
        self.db = self.state.db
        # Whether state files take writes (a full disk); see observe/health.py.
        self.health = self.state.health
        # Set when the state can no longer be kept (health.fatal): the master stops.
        self.failed = asyncio.Event()
        self.health.on_fatal = self.failed.set
        # Why the last changes could not be saved at stop (None: they were).
        self.unsaved: str | None = None
        self.core = MasterCore(config, self.db, seen or load_seen(config, self.db))
        # A loop that ends while running stops the master like a lost state dir.
        self.loops = LoopGuard(self.core.stats, on_broken=self.failed.set)
        self.core.robots = self.state.robots
        self.core.revisits.crawl_delays(self.state.robots.delays())  # the plans' paces
        self.core.sessions = SessionBook.in_state_dir(self.state.path)
        self.writer = ResultWriter(
            store,
            config.store.flush_size,
            config.store.flush_interval,
            self._on_durable,
            self.health,
        )
        # The jobs' history retention, a round every master.history_trim_interval.
        self.retention = HistoryRetention(store, lambda: self.config, self.core.stats)
        self.done = asyncio.Event()
        self.control_endpoint = ""
        self.results_endpoint = ""
        self._wake = asyncio.Event()
        self._router: zmq.asyncio.Socket | None = None
        self._pull: zmq.asyncio.Socket | None = None
        self._last_dead_poll = 0.0
        self._heard = HeardClock(time.monotonic())  # workers are judged as of then
        self.commits = GroupCommit(self.db.commit)  # see group_commit.py
        self._rate: collections.deque[tuple[float, int]] = collections.deque(maxlen=12)
        # The crawl's numbers over time, for the console's charts (observe/history.py).
        self.history = StatsHistory(config.console.history_every)
        self.started_at = time.time()  # wall clock: the "since start" of the console's rates
        self.api: ApiServer | None = None
        self.backpressure = Backpressure(self.writer, self.health)
        self.stored = status.StoredTotal(store)
        self.core.metrics.watch(self._metrics_state)
        self.replica = Replicator.for_master(config.master, self.core.metrics)  # or None
        if self.replica is not None:
            self.replica.on_superseded = self._on_superseded
        # Reads secrets and checks Apprise URLs now: a wrong one stops the start (exit 2).
        try:
            self.alerts = Alerts(config.alerts, source, config.node, self.core.stats)
            # The web archive (warc:), written from the exchanges workers send.
            self.archive = (
                Archive(config, config.warc, self.health, source, self.core.stats, self.db.vias)
                if config.warc
                else None
            )
        except ConfigError:
            self.state.close()
            if self.sockets is not None:
                self.sockets.close()
            raise

    # ---------------------------------------------------------- life cycle
    async def start(self) -> None:
        # Every address first: a second master on the same ports stops here,
        # before it admits seeds or writes anything.
        try:
            if self.sockets is None:
                self.sockets = MasterSockets(self.config, self.security)
            self._router, self._pull = self.sockets.router, self.sockets.pull
            if self.config.api.enabled:
                self.api = ApiServer(self)
                await self.api.start()
        except BindError:
            self._close_sockets()
            self.state.close()
            raise
        self.core.connected = PeerProbe(self._router.underlying).connected
        if self.replica is not None:  # after the binds: one master per state dir
            # What loading wrote, committed: the write lock free for the
            # tables Litestream needs (state/litestream_tables.py).
            self.db.commit()
            try:  # and before any work: one master per replica
                await self.replica.start()
            except SupersededError:
                await self._abandon_start()
                raise
        self.control_endpoint, self.results_endpoint = self.sockets.endpoints()
        self.admit_seeds([(s.spec(), s.job) for s in self.config.seed_list()])
        self.writer.start()
        self.stored.start()
        self.alerts.start(self)
        if await catch_up(self.core.revisits, self.writer.store):  # after a crash
            self.db.commit()
        self.core.listening(time.monotonic())
        # Guarded: a loop that fails on one message or tick is counted,
        # logged and started again (see loops.py).
        self.loops.start("control", self._control_loop)
        self.loops.start("results", self._results_loop)
        self.loops.start("dispatch", self._dispatch_loop, pause=BACKPRESSURE_RECHECK / 10)
        self.loops.start("housekeeping", self._housekeeping_loop)
        self.loops.start("revisit_due", self._revisit_due_loop)
        self.loops.start("history_trim", self.retention.loop)
        log.info(
            "master_started",
            control=self.control_endpoint,
            results=self.results_endpoint,
            queued=self.core.frontier.queued,
            hold=max(0.0, self.core.hold_until - time.monotonic()),
            # When it ends (epoch seconds), whenever this line got written.
            hold_ends=round(wall_of(self.core.hold_until), 3) if self.core.hold_until else None,
        )

    def _on_superseded(self) -> None:
        """Another master holds the replica (replica.py has stopped shipping):
        no more work handed out, the alert said now, then the master stops."""
        self._wake.set()  # the dispatch loop sees it and leases nothing more
        self.alerts.tick(self, time.monotonic())  # sent before the stop drains the channels
        self.failed.set()

    async def _abandon_start(self) -> None:
        if self.api is not None:
            await self.api.stop()
        self._close_sockets()
        self.state.close()

    async def stop(self) -> None:
        """Stop in full (store flushed, state saved), also after a loop died
        (MasterRole.stop then raises LoopFailed: exit status 1)."""
        await self.loops.stop()
        if self.api is not None:
            await self.api.stop()
        if self.replica_superseded() is None:
            await self._broadcast(Shutdown(reason="master stopping", done=self.done.is_set()))
        # else not a word to the workers: they keep their bags, find the
        # master that holds the replica (worker.master) and hand them over.
        self.core.record_clean_stop(time.monotonic())
        await self.writer.close()
        if self.archive is not None:
            self.archive.close()
        await self.stored.stop()
        await self.alerts.stop()
        self.commits.cancel()
        self.unsaved = await self.state.save(self.core.seen)
        if self.unsaved is not None:
            log.error("state_not_saved", reason=self.unsaved)
        self._close_sockets()
        self.state.close()
        if self.replica is not None:  # after the last commit: its final sync ships it
            await self.replica.stop()
        log.info("master_stopped", **self.status())

    def _close_sockets(self) -> None:
        if self.sockets is not None:
            self.sockets.close()

    def apply_config(self, new: Config) -> None:
        """Take a reloaded config (only live-changeable keys differ)."""
        old_seeds = {s.key() for s in self.config.seed_list()}
        self.config = new
        self.core.apply_config(new)
        self.state.configure(new)
        self.writer.configure(new.store.flush_size, new.store.flush_interval)
        if self.archive is not None:
            self.archive.rotate()  # a reload starts a new WARC file (logrotate's SIGHUP)
        added = [(s.spec(), s.job) for s in new.seed_list() if s.key() not in old_seeds]
        if added:
            log.info("seeds_added", count=self.admit_seeds(added))
        if self.done.is_set() and self.core.has_work():
            self.done.clear()
        self._wake.set()

    # ---------------------------------------------------------------- seeds
    def admit_seeds(
        self,
        given: Sequence[tuple[RequestSpec | str, str]],
        invalid: list[tuple[int, str]] | None = None,
    ) -> int:
        """Queue new seeds and commit them; see seeds.admit_seeds."""
        added = seeds.admit_seeds(self.core, given, invalid)
        self.db.commit()
        self._wake.set()
        return added

    # ------------------------------------------------------ jobs and status
    def resume_job(self, job: str) -> None:
        self.core.job_control.resume(job)
        self._wake.set()

    def full_status(self) -> dict[str, Any]:
        """Everything /api/stats shows."""
        return status.full(self)

    def _metrics_state(self) -> dict[str, Any]:
        return status.for_metrics(self)

    def _on_durable(self, records: Any) -> None:
        self.core.on_durable(records)
        self._wake.set()

    # ------------------------------------------------------------- dispatch
    async def _dispatch_loop(self) -> None:
        while True:
            # Woken by each message and write, the end is seen at once; once a
            # housekeeping tick found the start's own work (dead letters to retry).
            # Not when a job revisits: a link found again after `expire` is
            # due, and queued only by the tick's scan, which checks after it.
            if self._last_dead_poll and not self.core.leases and not self.core.revisits.scanning:
                self.writer.flush_soon()  # the last results are in: no batch to fill
                if self._check_complete():  # and the alerts' last word before the stop
                    self._alerts_tick(time.monotonic())
            if self.backpressure.holds() or self.replica_superseded() is not None:
                timeout: float | None = BACKPRESSURE_RECHECK
            else:
                await self._send_all(self.core.dispatch(time.monotonic()))
                due = self.core.next_dispatch_at()
                timeout = None if due is None else max(0.0, due - time.monotonic())
            await wait_set(self._wake, timeout)
            self._wake.clear()

    # --------------------------------------------------------- housekeeping
    async def _housekeeping_loop(self) -> None:
        master = self.config.master
        tick = self._housekeeping_tick()
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            if self._router is not None:  # first: it judges whether this tick came on time
                self._heard.tick(self._router, now, tick)
            self._rate.append((now, self.writer.written))
            if self.history.due(now):
                self.history.add(status.sample(self, time.time()))
            self.core.expire(now, self._heard.until)
            self.core.revisit_tick()
            if self.archive is not None:
                self.archive.trim()  # the captures of WARC files removed
            if now - self._last_dead_poll >= master.dead_letter_poll:
                self._last_dead_poll = now
                if self.core.frontier.requeue_dead():
                    log.info("dead_letters_requeued")
            self.db.commit()
            await self.state.snapshot_if_due(self.core.seen, now)
            self.state.retry()
            self._wake.set()
            self._check_complete()
            self._alerts_tick(now)

    async def _revisit_due_loop(self) -> None:
        """Queue each revisit as it falls due. The housekeeping tick scans too,
        but alone it made a page wait up to a tick past its due time, and a
        page fetched just after a tick (the dispatch follows the scan) waited
        the whole tick every time: `every: 1s` ran every 2 s."""
        idle = self._housekeeping_tick()
        while True:
            await asyncio.sleep(self.core.revisit_scan_in(idle))
            if self.core.revisit_scan():
                self._wake.set()

    def _housekeeping_tick(self) -> float:
        return min(1.0, self.config.master.lease_ttl / 4)

    def _alerts_tick(self, now: float) -> None:
        try:
            self.alerts.tick(self, now)
        except Exception:  # an alert bug must never stop the crawl
            self.core.stats["handler_errors"] += 1
            log.exception("alerts_failed")

    def _check_complete(self) -> bool:
        """Whether the crawl has just completed (logged and `done` set)."""
        if self.done.is_set() or not self.is_complete():
            return False
        self.db.commit()  # complete means committed, at a housekeeping tick or not
        log.info("crawl_complete", **self.status())
        self.done.set()
        return True
