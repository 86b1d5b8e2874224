"""The cost of rescheduling a job whose revisit policy changed.

Builds a frontier.db whose `revisits` table holds N known URLs, half of job
`shop` (every: 1h) and half of job `other`, interleaved on disk; then opens
it as the master does with `shop` changed to every: 15s and runs the
rescheduler's ticks, each followed by a commit (as the housekeeping tick
does), until the pass ends. Prints one JSON line: ticks, the total, and the
median, p95 and largest tick in milliseconds (commit included).

    python scripts/bench_revisit_reschedule.py --known 200000
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from nadird.common.urls import fingerprint
from nadird.config import config_from_dict
from nadird.job.spec import Job
from nadird.master.frontier.queues import Frontier
from nadird.master.revisits.scheduler import Revisits
from nadird.master.state.frontier_db import FrontierDB


def _jobs(shop: dict[str, Any]) -> dict[str, Job]:
    jobs = {"shop": {"revisit": shop}, "other": {"revisit": {"every": "1d"}}}
    return dict(config_from_dict({"jobs": jobs}, "bench.yaml").jobs)


def build(path: Path, known: int, domains: int) -> None:
    db = FrontierDB(path)
    Revisits(db.revisits, Frontier(db), _jobs({"every": "1h"}))  # records the policies
    db.close()
    now = time.time()
    rows = []
    for i in range(known):
        url = f"http://d{i % domains}.test/p{i}"
        job = "shop" if i % 2 else "other"
        rows.append(
            (fingerprint(url), url, job, f"d{i % domains}.test", 1, now + 3600, 3600.0, now - 10)
        )
    with sqlite3.connect(path) as raw:
        raw.executemany(
            "INSERT INTO revisits (fp, url, job, domain, depth, next_due, interval, last_fetch,"
            " stats) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '[]')",
            rows,
        )


def measure(path: Path) -> dict[str, Any]:
    db = FrontierDB(path)
    revisits = Revisits(db.revisits, Frontier(db), _jobs({"every": "15s"}))
    ticks: list[float] = []
    started = time.perf_counter()
    while revisits.rescheduling:
        at = time.perf_counter()
        revisits.rescheduler.tick(revisits.jobs, {})
        db.commit()
        ticks.append(time.perf_counter() - at)
    total = time.perf_counter() - started
    db.close()
    ticks.sort()
    return {
        "rows_rescheduled": revisits.rescheduler.rows_done,
        "ticks": len(ticks),
        "total_s": round(total, 2),
        "tick_ms_median": round(1000 * ticks[len(ticks) // 2], 1),
        "tick_ms_p95": round(1000 * ticks[int(len(ticks) * 0.95)], 1),
        "tick_ms_max": round(1000 * ticks[-1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--known", type=int, default=200_000, help="rows in the schedule")
    parser.add_argument("--domains", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "frontier.db"
        build(path, args.known, args.domains)
        print(json.dumps({"known": args.known, **measure(path)}))


if __name__ == "__main__":
    main()
