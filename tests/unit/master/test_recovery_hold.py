"""The restart hold as the stored lease mark bounds it, and the mark committed
before a bag or pong leaves."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from support.restart_hold_helpers import TTL

from nadird.common.urls import fingerprint
from nadird.config import Config, MasterConfig
from nadird.master.core import MasterCore
from nadird.master.frontier.seen import SeenSet
from nadird.master.leasing.lease_mark import KEY, LeaseMark, headroom_of, recovery_hold
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import Credit, Heartbeat, Hello


def stored_mark(path: Path) -> float | None:
    """leases_until as another connection sees it: only what was committed."""
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT value FROM meta WHERE key=?", (KEY,)).fetchone()
    return None if row is None else float(row[0])


def test_hold_follows_the_stored_bound(tmp_path: Path) -> None:
    master = MasterConfig(lease_ttl=TTL, heartbeat_interval=0.5)
    longest = TTL + headroom_of(master) + master.heartbeat_interval
    db = FrontierDB(tmp_path / "frontier.db")
    now = time.monotonic()
    assert recovery_hold(db, master, queued=False, now=now) == 0.0
    assert recovery_hold(db, master, queued=True, now=now) == now + TTL  # no mark: a period
    mark = LeaseMark(db, TTL, headroom_of(master))
    mark.cover(now)
    assert recovery_hold(db, master, True, now) == pytest.approx(now + longest, abs=0.1)
    mark.settle(None, now)
    assert recovery_hold(db, master, True, now) == 0.0  # clean stop, nothing out
    mark.settle(now + 1.0, now)
    assert recovery_hold(db, master, True, now) == pytest.approx(now + 1.5, abs=0.1)  # + 0.5 beat
    db.set_meta(KEY, repr(time.time() + 3600))  # the wall clock was set back
    assert recovery_hold(db, master, True, now) == pytest.approx(now + longest, abs=0.1)
    grace = MasterConfig(lease_ttl=TTL, heartbeat_interval=0.5, recovery_grace=0.5)
    assert recovery_hold(db, grace, True, now) == now + 0.5
    db.close()


def test_the_bound_is_committed_before_a_bag_or_pong_leaves(tmp_path: Path) -> None:
    config = Config(master=MasterConfig(lease_ttl=TTL, heartbeat_interval=0.5))
    path = tmp_path / "frontier.db"
    core = MasterCore(config, FrontierDB(path), SeenSet(10_000, 0.01))
    urls = [f"http://a.test/{i}" for i in range(3)]
    core.admission.admit("default", urls, [fingerprint(u) for u in urls], 0)
    now = time.monotonic()
    core.on_control(b"w", Hello(node="w1", capacity=1, pid=1, version="0"), now)
    core.on_control(b"w", Credit(node="w1", bags=1), now)
    assert stored_mark(path) is None
    before = time.time()
    assert len(core.dispatch(now)) == 1
    first = stored_mark(path)
    assert first is not None and first >= before + TTL
    lease = next(iter(core.leases)).id
    later = now + TTL  # renewed a period later: the bound must move with it
    core.on_control(b"w", Heartbeat(node="w1", leases=[lease], seq=1), later)
    renewed = stored_mark(path)
    assert renewed is not None and renewed > first
    core.record_clean_stop(later)  # w1 is alive: it was told to drop its bags
    core.frontier.db.commit()
    assert stored_mark(path) == 0.0
    core.frontier.db.close()
