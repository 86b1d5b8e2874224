"""The master's state directory: its files, their snapshots, their write health.

frontier.db (queue, admission log, dead letters), seen.bloom (the seen set's
snapshot) and robots.db (a cache) are written here. When a write fails (disk
full), StateHealth holds dispatch and says so; this module tries the writes
again once their back-off is over: the frontier's commit, the snapshot, the
robots notes kept in memory.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from nadird.config import Config
from nadird.master.frontier.seen import SeenSet, write_atomic
from nadird.master.leasing.robots_notes import RobotsNotes
from nadird.master.observe.health import StateHealth
from nadird.master.state.files import FRONTIER_FILE, ROBOTS_FILE, SEEN_FILE
from nadird.master.state.frontier_db import FrontierDB


def state_health(config: Config) -> StateHealth:
    master = config.master
    return StateHealth(
        master.state_dir,
        master.state_retry_delay,
        master.state_retry_max_delay,
        master.state_give_up_after,
    )


class StateDir:
    def __init__(self, config: Config) -> None:
        self.path = Path(config.master.state_dir)
        self.config = config
        self.health = state_health(config)
        self.db = FrontierDB(self.path / FRONTIER_FILE, self.health)
        robots = config.fetch.robots
        self.robots = RobotsNotes(
            self.path / ROBOTS_FILE, robots.ttl, self.health, robots.user_agent
        )
        self._last_snapshot = time.monotonic()

    @property
    def seen_path(self) -> Path:
        return self.path / SEEN_FILE

    def configure(self, config: Config) -> None:
        """Take the reloaded retry settings."""
        self.config = config
        fresh = state_health(config)
        self.health.retry_delay = fresh.retry_delay
        self.health.retry_max_delay = fresh.retry_max_delay
        self.health.give_up_after = fresh.give_up_after

    async def snapshot_if_due(self, seen: SeenSet, now: float) -> None:
        if self.health.failing(SEEN_FILE):  # a failed one is tried after its back-off
            due = self.health.may_try(SEEN_FILE)
        else:
            due = now - self._last_snapshot >= self.config.master.snapshot_interval
        if due:
            self._last_snapshot = now
            await self.snapshot(seen)

    async def snapshot(self, seen: SeenSet) -> None:
        # Only committed admissions may be in a snapshot: a URL marked seen
        # but lost from the frontier by a crash would never be crawled.
        if not self.db.commit():
            return
        data, seq = seen.to_bytes(), seen.seq
        try:
            await asyncio.to_thread(write_atomic, self.seen_path, data)
        except OSError as exc:
            # The previous snapshot is intact (atomic rename, temp file
            # removed) and the admissions since stay logged in frontier.db.
            self.health.failed(SEEN_FILE, exc)
            return
        self.health.ok(SEEN_FILE)
        self.db.trim_admitted(seq)

    def retry(self) -> None:
        """Try the robots notes again once their back-off is over, and give up
        past master.state_give_up_after. (frontier.db is tried by its next
        commit, seen.bloom by snapshot_if_due, the store by its writer.)"""
        if self.health.failing(ROBOTS_FILE) and self.health.may_try(ROBOTS_FILE):
            self.robots.retry()
        self.health.check_give_up()

    async def save(self, seen: SeenSet) -> str | None:
        """At stop: commit (whatever the back-off) and snapshot. Returns why
        the last changes could not be saved, None when they were."""
        if self.db.commit(retry_now=True):
            await self.snapshot(seen)
            return None
        failure = self.health.status()["failing"].get(FRONTIER_FILE, {})
        return (
            f"{self.db.path} could not be written ({failure.get('error', self.health.fatal)}); "
            "it holds its last commit, which is consistent: once it can be written, start "
            "the master again and it crawls again the URLs whose results were not committed"
        )

    def close(self) -> None:
        self.db.close()
        self.robots.close()
