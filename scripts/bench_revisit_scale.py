"""The master's revisit schedule at scale: N known URLs in frontier.db.

Two processes, so that the measured peak RSS is the master side's alone:

1. build: a real FrontierDB whose `revisits` table gets N known URLs of one
   revisiting job, spread over D domains, through RevisitTable.put_many in
   large committed transactions. Due times are a permutation of N slots one
   `--step` apart, starting an hour after the build's clock, so that the
   rows due at any time are scattered over the table, as after real fetches.
2. measure: a fresh process opens the file as the master does (FrontierDB,
   Frontier, Revisits on a wall clock the script moves) and times the due
   scan with 0, 1,000 and 10,000 URLs due, the scan once all of those are
   queued, the due counts of the status line, the per-result cost (on_page
   and settle of a fetched revisit), the per-link cost of link discovery
   (`found`) and of a bag's validators; then its peak RSS (getrusage) and
   the file's size on disk.

With `--adaptive` the job's schedule is adaptive and every row is in a
plan group (rule and rate class set, a few classes per domain): `open_ms`
then includes loading the plans' page counts (`plan_load_ms`, the Revisits
constructor alone), and the build and settle figures include keeping the
counts. `rewrite_rows_per_s` times the schedule's write path alone (rows
written again, half of them into another group). The opening of a file and
the write path with and without the plan-count triggers are timed by
scripts/bench_revisit_counts.py.

    python scripts/bench_revisit_scale.py --known 10000000 --domains 100000
    python scripts/bench_revisit_scale.py --known 1000000 --dir /tmp/rs1m
    python scripts/bench_revisit_scale.py --known 1000000 --adaptive
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench_common import rss_mb  # scripts/: on sys.path when run as a script

from nadird.common.urls import fingerprint
from nadird.config import config_from_dict
from nadird.job.spec import Job
from nadird.master.frontier.queues import Frontier
from nadird.master.revisits.scheduler import Revisits
from nadird.master.state.frontier_db import FrontierDB
from nadird.master.state.revisit_db import Entry
from nadird.protocol.messages import PageResult
from nadird.revisit.estimate import ChangeStats

BASE = 1_800_000_000.0  # the build's wall clock (epoch seconds)
FIRST_DUE = BASE + 3600.0  # nothing is due before this
BUILD_CHUNK = 200_000  # rows per committed transaction
JOB = "shop"
# A prime: i -> i * SPREAD mod N is a permutation of 0..N-1 (N not a multiple
# of it), cheap and scattered.
SPREAD = 2_654_435_761


def url_of(i: int, domains: int) -> str:
    return f"http://www.d{i % domains}.com/item/{i}"


def due_rank(i: int, known: int) -> int:
    return (i * SPREAD) % known


ADAPTIVE = {"adaptive": {"min": "1h", "max": "60d", "initial": "30d"}}
# Rate classes of the rows (--adaptive): each domain has its pages in all four.
CLASSES = (-160, -150, -140, -130)


def jobs(adaptive: bool = False) -> dict[str, Job]:
    revisit = ADAPTIVE if adaptive else {"every": "30d"}
    job = {"revisit": revisit, "expire": "60d"}  # expire: `found` reads the table
    config = config_from_dict({"jobs": {JOB: job}}, "bench.yaml")
    return dict(config.jobs)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


# ------------------------------------------------------------------ build
def entries(
    start: int, stop: int, known: int, domains: int, step: float, adaptive: bool
) -> Iterator[Entry]:
    stats = ChangeStats(3.0, 1.0, 2592000.0, 0.0, 0.0)
    for i in range(start, stop):
        url = url_of(i, domains)
        yield Entry(
            fp=fingerprint(url),
            url=url,
            job=JOB,
            domain=f"d{i % domains}.com",
            depth=1,
            next_due=FIRST_DUE + due_rank(i, known) * step,
            queued=False,
            interval=2592000.0,
            last_fetch=BASE - 2592000.0,
            last_change=BASE - 2592000.0,
            checks=3,
            changes=1,
            stats=stats,
            etag=f'"{i:x}"',
            last_modified="Tue, 01 Dec 2026 10:00:00 GMT",
            signature="0" * 32,
            plan_rule=-1 if adaptive else None,
            plan_class=CLASSES[i // domains % len(CLASSES)] if adaptive else None,
        )


def build(path: Path, known: int, domains: int, step: float, adaptive: bool) -> dict[str, Any]:
    if known % SPREAD == 0:
        raise SystemExit("--known must not be a multiple of the spread multiplier")
    db = FrontierDB(path)
    # The builder's own page cache (not the master's): 1 GiB keeps the
    # random fingerprint index in memory while millions of rows go in.
    db._db.execute("PRAGMA cache_size=-1048576")
    table = db.revisits
    started = time.perf_counter()
    for start in range(0, known, BUILD_CHUNK):
        stop = min(known, start + BUILD_CHUNK)
        table.put_many(entries(start, stop, known, domains, step, adaptive))
        db.commit()
        done = min(known, start + BUILD_CHUNK)
        if done % 1_000_000 == 0:
            rate = done / (time.perf_counter() - started)
            print(f"  built {done:,} ({rate:,.0f} rows/s)", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    db.close()
    return {"build_seconds": round(seconds, 1), "build_rows_per_s": round(known / seconds)}


# ---------------------------------------------------------------- measure
class Wall:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def timed(action: Callable[[], object], repeat: int = 1) -> float:
    """Median milliseconds of `repeat` calls."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(samples), 3)


def scan_and_commit(revisits: Revisits, db: FrontierDB) -> Callable[[], object]:
    def run() -> None:
        revisits.scan()
        db.commit()

    return run


def page_of(entry: Entry, changed: bool) -> PageResult:
    return PageResult(
        url=entry.url,
        fp=entry.fp,
        final_url=entry.url,
        status=200,
        fetched_at=0.0,
        depth=entry.depth,
        signature=("1" if changed else "0") * 32,
        etag=entry.etag,
    )


def measure_scans(revisits: Revisits, db: FrontierDB, wall: Wall, step: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    table = revisits.table
    wall.now = FIRST_DUE - 1.0
    out["scan_0_due_ms"] = timed(scan_and_commit(revisits, db), repeat=20)
    out["count_due_0_ms"] = timed(lambda: table.count_due(wall.now), repeat=20)
    wall.now = FIRST_DUE + 999.5 * step  # ranks 0..999 are due
    out["count_due_1000_ms"] = timed(lambda: table.count_due(wall.now), repeat=5)
    out["scan_1000_due_ms"] = timed(scan_and_commit(revisits, db))
    wall.now = FIRST_DUE + 10_999.5 * step  # 10,000 more
    out["count_due_11000_ms"] = timed(lambda: table.count_due(wall.now), repeat=5)
    drains = [timed(scan_and_commit(revisits, db)) for _ in range(10)]
    out["scan_10000_due_first_ms"] = drains[0]
    out["scan_10000_due_drain_ms"] = round(sum(drains), 3)
    # Every due URL is now queued (11,000, none fetched yet): a tick finds nothing.
    out["scan_11000_due_all_queued_ms"] = timed(scan_and_commit(revisits, db), repeat=20)
    out["status_ms"] = timed(revisits.status, repeat=5)
    out["queued_by_scans"] = revisits.queued
    return out


def measure_counts(revisits: Revisits, wall: Wall, known: int, step: float) -> dict[str, Any]:
    """The status line's due counts when a tenth of what is known is due:
    one count, a status that counts, and one right after it (reused)."""
    wall.now = FIRST_DUE + (known // 10 - 0.5) * step
    time.sleep(1.0)  # past the reuse window of the status's last count
    return {
        "count_due_tenth_ms": timed(lambda: revisits.table.count_due(wall.now), repeat=3),
        "status_tenth_due_ms": timed(revisits.status),
        "status_tenth_due_again_ms": timed(revisits.status),
        "status_tenth_due": revisits.status()["revisit_due"],
    }


def queued_entries(db: FrontierDB, limit: int) -> list[Entry]:
    conn = sqlite3.connect(db.path)
    try:
        fps = [
            fp
            for (fp,) in conn.execute("SELECT fp FROM revisits WHERE queued = 1 LIMIT ?", (limit,))
        ]
    finally:
        conn.close()
    return list(db.revisits.get_many(fps).values())


def measure_settle(revisits: Revisits, db: FrontierDB, wall: Wall) -> dict[str, Any]:
    batch = queued_entries(db, 5000)
    pages = [page_of(entry, changed=n % 4 == 0) for n, entry in enumerate(batch)]
    wall.now += 60.0
    started = time.perf_counter()
    for at in range(0, len(pages), 100):
        chunk = pages[at : at + 100]
        for page in chunk:
            revisits.on_page(page, JOB)
        revisits.settle([page.fp for page in chunk])
        db.commit()
    seconds = time.perf_counter() - started
    return {
        "settled": len(batch),
        "settle_us_per_result": round(seconds / max(1, len(batch)) * 1e6, 1),
    }


def measure_rewrites(db: FrontierDB, known: int, domains: int) -> dict[str, Any]:
    """The schedule's write path alone: 20,000 known rows written again
    (put_many, 1,000 per commit), every other one moved to another plan
    group: what keeping the plan counts adds to a fetch's row."""
    fps = [fingerprint(url_of((i * 7907) % known, domains)) for i in range(20_000)]
    rows = list(db.revisits.get_many(fps).values())
    for n, entry in enumerate(rows):
        entry.last_fetch += 60.0
        if n % 2 == 0:  # into another group of its domain
            entry.plan_class = CLASSES[0] if entry.plan_class != CLASSES[0] else CLASSES[1]
    started = time.perf_counter()
    for at in range(0, len(rows), 1000):
        db.revisits.put_many(rows[at : at + 1000])
        db.commit()
    seconds = time.perf_counter() - started
    return {"rewrite_rows_per_s": round(len(rows) / seconds)}


def measure_lookups(revisits: Revisits, known: int, domains: int) -> dict[str, Any]:
    """Link discovery (`found`, with expire) and bag validators, per URL."""
    links = [fingerprint(url_of((i * 7919) % known, domains)) for i in range(6400)]
    started = time.perf_counter()
    for at in range(0, len(links), 640):
        revisits.found(JOB, links[at : at + 640])
    found_us = (time.perf_counter() - started) / len(links) * 1e6
    started = time.perf_counter()
    for at in range(0, len(links), 64):
        revisits.validators(JOB, links[at : at + 64])
    validators_us = (time.perf_counter() - started) / len(links) * 1e6
    return {
        "found_us_per_link": round(found_us, 1),
        "validators_us_per_url": round(validators_us, 1),
    }


def open_master(
    path: Path, wall: Wall, adaptive: bool
) -> tuple[FrontierDB, Revisits, dict[str, Any]]:
    """Open the file as the master does, timed: all of it and the plan load."""
    opened = time.perf_counter()
    db = FrontierDB(path)
    frontier = Frontier(db, wall=wall)
    loading = time.perf_counter()
    revisits = Revisits(db.revisits, frontier, jobs(adaptive), wall=wall)
    done = time.perf_counter()
    groups = sum(len(counts) for counts in revisits.planner.counts.values())
    return (
        db,
        revisits,
        {
            "open_ms": round((done - opened) * 1000, 1),
            "plan_load_ms": round((done - loading) * 1000, 1),
            "plan_groups": groups,
        },
    )


def measure(path: Path, known: int, domains: int, step: float, adaptive: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"rss_start_mb": round(rss_mb(), 1)}
    wall = Wall(BASE)
    db, revisits, opened = open_master(path, wall, adaptive)
    out.update(opened)
    out["rss_open_mb"] = round(rss_mb(), 1)
    out.update(measure_scans(revisits, db, wall, step))
    out.update(measure_counts(revisits, wall, known, step))
    out.update(measure_settle(revisits, db, wall))
    out.update(measure_rewrites(db, known, domains))
    out.update(measure_lookups(revisits, known, domains))
    out["rss_end_mb"] = round(rss_mb(), 1)
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    db.close()
    return out


def disk_mb(path: Path) -> float:
    files = [path, path.with_name(path.name + "-wal")]
    return round(sum(f.stat().st_size for f in files if f.exists()) / 1e6, 1)


# ------------------------------------------------------------------- main
def child(phase: str, args: argparse.Namespace, path: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--phase", phase, "--known", str(args.known)]
    command += ["--domains", str(args.domains), "--step", str(args.step), "--dir", str(path.parent)]
    command += ["--adaptive"] if args.adaptive else []
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--known", type=int, default=10_000_000, help="known URLs")
    parser.add_argument("--domains", type=int, default=100_000)
    parser.add_argument("--step", type=float, default=0.25, help="seconds between due times")
    parser.add_argument("--dir", help="state directory (default: a temp dir)")
    parser.add_argument("--adaptive", action="store_true", help="rows in plan groups")
    parser.add_argument("--phase", choices=("build", "measure"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    state = Path(args.dir or tempfile.mkdtemp(prefix="nadird-revisit-bench-"))
    path = state / "frontier.db"
    if args.phase == "build":
        print(json.dumps(build(path, args.known, args.domains, args.step, args.adaptive)))
        return 0
    if args.phase == "measure":
        print(json.dumps(measure(path, args.known, args.domains, args.step, args.adaptive)))
        return 0
    if path.exists():
        raise SystemExit(f"{path} exists: give an empty --dir")
    report: dict[str, Any] = {
        "known": args.known,
        "domains": args.domains,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    report.update(child("build", args, path))
    report["disk_mb"] = disk_mb(path)
    report.update(child("measure", args, path))
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
