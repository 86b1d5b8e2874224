"""Which master may hand out work from a replica: the state's generation.

replica.db (replicated with the rest, master/state/replica_files.py) holds
one row: the generation of the state, bumped by each master that starts on
it, with its host and start time. Before it hands out work, a master with
master.replica reads the replica's row: a replica whose generation is above
this state's was written by a master started since from the replica (one
restored on another host, most likely). This state is then behind it, and
two masters must never hand out the same work: the master refuses to start
(SupersededError, exit status 3) and says how to come back. A running
master reads the replica's row again every master.replica_check_interval
(master/service/replica_watch.py) and stops the same way when another
master took the replica over while it ran (a partition, a hung host).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nadird.common.errors import SupersededError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n INTEGER NOT NULL,
    host TEXT NOT NULL,
    started_at REAL NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class Generation:
    n: int  # 0: no master started on this state with a replica yet
    host: str = ""
    started_at: float = 0.0


NONE = Generation(0)


def read_generation(path: Path) -> Generation:
    """The generation recorded in the replica.db at `path` (NONE without one)."""
    if not path.exists():
        return NONE
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        if "generation" not in tables:
            return NONE
        row = db.execute("SELECT n, host, started_at FROM generation").fetchone()
        return NONE if row is None else Generation(int(row[0]), str(row[1]), float(row[2]))
    finally:
        db.close()


def bump_generation(path: Path, host: str, now: float) -> Generation:
    """This master's start: the state's generation plus one, in replica.db."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")  # Litestream replicates WAL databases only
        db.execute(_SCHEMA)
        db.execute("BEGIN IMMEDIATE")
        row = db.execute("SELECT n FROM generation").fetchone()
        started = Generation((0 if row is None else int(row[0])) + 1, host, now)
        db.execute(
            "INSERT OR REPLACE INTO generation VALUES (1, ?, ?, ?)",
            (started.n, started.host, started.started_at),
        )
        db.execute("COMMIT")
        return started
    finally:
        db.close()


def check_not_superseded(local: Generation, replica: Generation, state_dir: str, url: str) -> None:
    """Refuse a state that a master started from the replica has overtaken.

    A replica behind the state (its last changes not shipped when the master
    stopped or died) is normal: this state is the newer one."""
    if replica.n <= local.n:
        return
    raise SupersededError(
        f"{state_dir} holds generation {local.n} of the crawl state, but the replica "
        f"{url} holds generation {replica.n}, started on {replica.host or 'another host'} "
        f"at {_when(replica.started_at)}: another master runs (or ran) from this replica "
        "since this state was left. Refusing to hand out the same work twice. Stop that "
        "master first, then `nadird restore --force` here to continue from the replica"
    )


def supersedes(replica: Generation, own: Generation) -> bool:
    """Whether the replica's generation was taken by another master than the
    one that took `own`, read while that one runs. Higher is another master
    started from the replica; the same number with another host or start
    time is one restored from a replica that never got `own` (this master
    started cut off from it). Lower is `own` not shipped yet."""
    if replica.n != own.n:
        return replica.n > own.n
    return (replica.host, replica.started_at) != (own.host, own.started_at)


def superseded_while_running(own: Generation, replica: Generation, url: str) -> str:
    """Why a running master stops: both generations, where and when each started."""
    return (
        f"the replica {url} holds generation {replica.n}, started on "
        f"{replica.host or 'another host'} at {_when(replica.started_at)}, while this "
        f"master runs generation {own.n}, started on {own.host} at {_when(own.started_at)}: "
        "another master took the replica over. Stopping without handing out more work "
        "or replicating over it; to go on here, stop that master, then `nadird restore "
        "--force` and start this one again"
    )


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
