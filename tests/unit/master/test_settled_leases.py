"""A worker keeps a finished bag until its master says the bag's results are
stored (Pong.settled; worker/held.py): settled only once they are durable
and the lease's end is committed, so a master that crashes before still
finds the lease's record and asks its holder for those results again,
however long its store took."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from support.core_helpers import A_URLS, page, results
from test_lease_adoption import first_run

from nadird.master.core import MasterCore
from nadird.protocol.messages import BagDone, Heartbeat, Pong


def recorded(state: Path) -> set[str]:
    """The leases whose records a master started after a crash now would read."""
    with sqlite3.connect(state / "frontier.db") as db:
        return {lease_id for (lease_id,) in db.execute("SELECT id FROM leases")}


def beat(core: MasterCore, finished: list[str], now: float) -> list[str]:
    [(_, pong)] = core.on_control(b"w1", Heartbeat("w1", [], seq=1, finished=finished), now)
    assert isinstance(pong, Pong)
    return pong.settled


def test_a_finished_bag_is_settled_once_its_results_are_stored_and_committed(
    tmp_path: Path,
) -> None:
    old, session, bags = first_run(tmp_path)
    a, b = bags["a.test"], bags["b.test"]
    now = time.monotonic()
    records = old.on_results(results(a, "w1", session, [page(u) for u in A_URLS]), now)
    old.on_control(b"w1", BagDone("w1", a.lease, a.epoch, returned=[]), now)
    assert a.lease not in {lease.id for lease in old.leases}  # closed, results not stored
    assert beat(old, [a.lease, b.lease], now) == []  # b.test still runs
    old.frontier.db.commit()
    assert recorded(tmp_path) == {a.lease, b.lease}  # a crash now: a.test's results asked again
    old.on_durable(records)
    assert beat(old, [a.lease, b.lease], now) == [a.lease]
    # No commit in between: the Pong came after the lease's end was durable.
    assert recorded(tmp_path) == {b.lease}
    assert beat(old, ["no-such-lease"], now) == ["no-such-lease"]  # nothing waits for it
    old.frontier.db.close()
