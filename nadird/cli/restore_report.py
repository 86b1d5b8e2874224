"""What `nadird restore` says it restored: the crawl's counts read from the
restored frontier.db, and each replica's position (the last transaction it
holds, and when it was written) as Litestream lists it."""

from __future__ import annotations

import itertools
import json
import sqlite3
import subprocess
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from nadird.master.service.replica_fetch import replica_args

LIST_TIMEOUT = 300.0  # one listing, from a slow remote replica
# Counted in the restored frontier.db (tables a file of an older master may lack count 0).
COUNTS = {
    "queued": "SELECT count(*) FROM queue",
    "leases": "SELECT count(*) FROM leases",
    "dead_letters": "SELECT count(*) FROM dead_letters",
    # Every URL ever admitted: the admission log's counter, kept when it is trimmed.
    "known": "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name='admitted'",
}


def quick_check(path: Path) -> str:
    """SQLite's own check of a restored database: "ok", or what is wrong
    (its first lines). Reads every page once: seconds for a large file."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = db.execute("PRAGMA quick_check").fetchmany(5)
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        db.close()
    return "; ".join(str(row[0]) for row in rows)


def frontier_counts(path: Path) -> dict[str, int]:
    """URLs queued and known, leases out, dead letters, in a restored frontier.db."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        counts = {}
        for what, query in COUNTS.items():
            table = query.split("FROM ")[1].split()[0]
            counts[what] = int(db.execute(query).fetchone()[0]) if table in tables else 0
        return counts
    finally:
        db.close()


def replica_position(
    binary: str, url: str, name: str, sftp_key: str | None = None
) -> dict[str, Any]:
    """The replica's last transaction id of database `name` and its age in seconds."""
    with replica_args(url, name, sftp_key) as source:
        done = subprocess.run(
            [binary, "ltx", "-no-expand-env", "-json", "-level", "all", *source],
            capture_output=True,
            text=True,
            timeout=LIST_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    # Litestream may log a line before the JSON on stdout (an sftp:// host
    # key it does not verify): the listing starts at the first "[" line.
    lines = done.stdout.splitlines() if done.returncode == 0 else []
    listing = "\n".join(itertools.dropwhile(lambda line: not line.startswith("["), lines))
    try:
        files = json.loads(listing) if listing else []
    except ValueError:
        files = []
    if not files:
        return {"txid": None, "written_at": None, "age_seconds": None}
    txid = max(int(f["max_txid"], 16) for f in files)
    # When it arrived: compaction writes the same transaction again later.
    stamp = min(f["timestamp"] for f in files if int(f["max_txid"], 16) == txid)
    written = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return {
        "txid": txid,
        "written_at": stamp,
        "age_seconds": round(max(0.0, time.time() - written), 1),
    }
