"""Litestream's own two tables, made in each replicated database before it starts.

Litestream creates `_litestream_seq` and `_litestream_lock` in every database
it replicates when it first opens it (`CREATE TABLE IF NOT EXISTS`), which
takes the database's write lock. A busy master holds that lock nearly all
the time (its group commit keeps a transaction open between commits), so
Litestream's setup failed with SQLITE_BUSY and retried for many seconds, in
which nothing of that database reached the replica. Made beforehand, the
tables exist and Litestream's statements change nothing and lock nothing.

Run as its own process (`python -m nadird.master.state.litestream_tables
DB...`) by the master before it starts Litestream: a connection opened and
closed inside the master would drop the POSIX locks the master's own
connections hold on the same file (see replica_files.databases).
"""

from __future__ import annotations

import sqlite3
import sys

# As Litestream 0.5 declares them (db.go): the same statements, so that its
# own IF NOT EXISTS finds them whatever it checks.
TABLES = (
    "CREATE TABLE IF NOT EXISTS _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)",
    "CREATE TABLE IF NOT EXISTS _litestream_lock (id INTEGER)",
)
BUSY_TIMEOUT = 10.0  # seconds: the master is starting, its writes are short


def make_tables(path: str) -> None:
    db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT)
    try:
        for statement in TABLES:
            db.execute(statement)
    finally:
        db.close()


def main(paths: list[str]) -> int:
    failed = 0
    for path in paths:
        try:
            make_tables(path)
        except sqlite3.Error as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
