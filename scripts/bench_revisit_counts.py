"""The revisit plan counts of an existing frontier.db (one a
bench_revisit_scale.py build made, with --adaptive), two measures:

- open: the file opened as the master opens it, twice, each in a fresh
  process, timed (open_ms, plan_load_ms): a file from before the counts
  table is migrated by the first open only.
- triggers: the schedule's write path (bench_revisit_scale.measure_rewrites:
  20,000 rows written again, half into another plan group) with the
  plan-count triggers and without, three times each in turn.

    python scripts/bench_revisit_counts.py open --dir DIR --adaptive
    python scripts/bench_revisit_counts.py triggers --dir DIR --known N --domains D
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_revisit_scale import BASE, Wall, measure_rewrites, open_master

from nadird.master.state.frontier_db import FrontierDB


def trigger_ab(path: Path, known: int, domains: int) -> dict[str, Any]:
    """rewrite_rows_per_s with the plan-count triggers and without, three
    times each in turn, on one open file (the same code otherwise: the upsert);
    the triggers are back (and the counts rebuilt) at the next open."""
    db = FrontierDB(path)
    names = ("revisit_counts_insert", "revisit_counts_delete", "revisit_counts_update")
    saved = [
        row[0]
        for row in db._db.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?, ?)", names
        )
    ]
    runs: dict[str, list[int]] = {"with_triggers": [], "without_triggers": []}
    for _ in range(3):
        for kind in runs:
            runs[kind].append(measure_rewrites(db, known, domains)["rewrite_rows_per_s"])
            for name in names:  # from "with" to "without", and back
                db._db.execute(f"DROP TRIGGER IF EXISTS {name}")
            for sql in saved if kind == "without_triggers" else ():
                db._db.execute(sql)
    db.close()
    return runs


def open_once(path: Path, adaptive: bool) -> dict[str, Any]:
    db, _, opened = open_master(path, Wall(BASE), adaptive)
    db.close()
    return opened


def open_twice(args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "open-once", "--dir", args.dir]
    command += ["--adaptive"] if args.adaptive else []
    runs = []
    for _ in range(2):
        done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {"first": runs[0], "second": runs[1]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("what", choices=("open", "open-once", "triggers"))
    parser.add_argument("--dir", required=True, help="the build's state directory")
    parser.add_argument("--known", type=int, default=1_000_000, help="as built")
    parser.add_argument("--domains", type=int, default=100_000, help="as built")
    parser.add_argument("--adaptive", action="store_true", help="the job as built")
    args = parser.parse_args()
    path = Path(args.dir) / "frontier.db"
    if not path.exists():
        raise SystemExit(f"{path}: no such file (build one with bench_revisit_scale.py)")
    if args.what == "open-once":
        result = open_once(path, args.adaptive)
    elif args.what == "open":
        result = open_twice(args)
    else:
        result = trigger_ab(path, args.known, args.domains)
    print(json.dumps(result, indent=None if args.what == "open-once" else 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
