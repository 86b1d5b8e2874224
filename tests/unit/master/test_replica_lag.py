"""The replica's lag from Litestream's `replica sync` lines (observe/replica_lag.py)."""

from __future__ import annotations

from typing import Any

from nadird.master.observe.replica_lag import ReplicaLag


def sync(db: str, replica: int, local: int) -> dict[str, Any]:
    return {
        "level": "DEBUG",
        "msg": "replica sync",
        "db": db,
        "replica": "file",
        "txid": {"replica": f"{replica:016x}", "db": f"{local:016x}"},
    }


def test_caught_up_is_zero_and_other_lines_are_not_taken() -> None:
    lag = ReplicaLag()
    assert lag.seconds(5.0) == 0.0  # nothing known: no database
    assert not lag.line({"msg": "sync", "db": "frontier.db", "txid": "04"}, 1.0)
    assert lag.line(sync("frontier.db", 3, 3), 1.0)
    assert lag.seconds(100.0) == 0.0


def test_a_change_waits_from_when_it_was_first_seen_until_the_replica_has_it() -> None:
    lag = ReplicaLag()
    lag.line(sync("frontier.db", 3, 4), 10.0)  # txid 4 seen at 10, not uploaded yet
    assert lag.seconds(10.5) == 0.5
    lag.line(sync("frontier.db", 3, 5), 11.0)  # still 3 on the replica: 4 is the oldest
    assert lag.seconds(12.0) == 2.0
    lag.line(sync("frontier.db", 4, 5), 12.5)  # 4 arrived; 5 (seen at 11) waits
    assert lag.seconds(13.0) == 2.0
    lag.line(sync("frontier.db", 5, 5), 13.0)
    assert lag.seconds(20.0) == 0.0


def test_steady_writes_keep_the_lag_within_one_sync() -> None:
    lag = ReplicaLag()
    for step in range(1, 50):  # each sync starts one behind and uploads it
        lag.line(sync("frontier.db", step - 1, step), step * 0.1)
        assert lag.seconds(step * 0.1 + 0.1) <= 0.1 + 1e-9


def test_the_worst_database_is_the_lag_and_each_is_reported() -> None:
    lag = ReplicaLag()
    lag.line(sync("frontier.db", 1, 2), 1.0)
    lag.line(sync("robots.db", 7, 7), 1.0)
    assert lag.seconds(4.0) == 3.0
    assert lag.by_db(4.0) == {"frontier.db": 3.0, "robots.db": 0.0}


def test_a_database_unheard_since_litestream_started_or_ended_counts_as_behind() -> None:
    lag = ReplicaLag()
    lag.line(sync("frontier.db", 2, 2), 1.0)
    lag.unheard(["frontier.db", "robots.db"], 5.0)  # Litestream ended at 5
    assert lag.seconds(9.0) == 4.0
    lag.unheard(["frontier.db"], 7.0)  # started again: the older mark stays
    assert lag.seconds(9.0) == 4.0
    lag.line(sync("frontier.db", 2, 2), 9.0)
    assert lag.by_db(10.0) == {"frontier.db": 0.0, "robots.db": 5.0}


def test_malformed_lines_are_ignored() -> None:
    lag = ReplicaLag()
    assert not lag.line({"msg": "replica sync", "db": "a.db", "txid": "zz"}, 1.0)
    assert not lag.line({"msg": "replica sync", "db": "a.db", "txid": {"db": "1"}}, 1.0)
    bad = sync("a.db", 0, 0)
    bad["txid"]["db"] = "not-hex"
    assert not lag.line(bad, 1.0)
    assert lag.seconds(2.0) == 0.0
