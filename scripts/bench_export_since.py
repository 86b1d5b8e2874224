"""Benchmark: `nadird export --since` / `--cursor` over a large store, with and
without the index on the fetch time.

    python scripts/bench_export_since.py [--pages 100000] [--new 1000] [--baseline main]

Writes --pages pages (a 2 KB HTML body and a few fields each, one second
apart, through the store's own write path) into a real SQLite store, the
last --new of them being "what is new". Then runs, as a user runs them, in
subprocesses (`python -m nadird export ... --out /dev/null`): with the code
of --baseline (a git ref, unpacked with `git archive`, as
bench_export_changes.py does), which reads the whole store and keeps what
is new, and with this tree's code, which asks the store for what was
fetched since through the `pages_fetched_at` index:

  since        --since the first new page's fetch time
  cursor poll  --cursor FILE again, right after a first export with the same
               FILE (nothing new: what an indexer polling every minute pays)

Also measures what the index costs: writing --write-pages pages into a
fresh store with and without it (this tree's write path, the index dropped
at open for the second), alternated --write-rounds times, the median of
each; and making it at the first open of a store from before it.
Prints one JSON object for docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_export_changes import LAUNCHER, baseline_tree, run_facts
from support import REPO

sys.path.insert(0, str(REPO))

from nadird.store.base import PageRecord
from nadird.store.sqlite.store import SqliteStore

T0 = 1_764_000_000.0
BATCH = 1000  # records per store write, as the master's writer batches them
WORDS = ["budget", "vote", "council", "river", "market", "school", "winter", "station", "report"]


def _record(n: int) -> PageRecord:
    url = f"http://news-{n % 100}.test/articles/{n}"
    text = " ".join(WORDS[(n + k) % len(WORDS)] + str(k) for k in range(300))
    body = f"<html><head><title>Story {n}</title></head><body><p>{text}</p></body></html>"
    return PageRecord(
        fp=n.to_bytes(16, "big"),
        url=url,
        final_url=url,
        status=200,
        fetched_at=T0 + n,
        job="news",
        depth=1,
        content_type="text/html",
        body=body.encode(),
        data={"title": f"Story {n}", "published": "2026-12-01T10:00:00+00:00"},
    )


async def _write(path: Path, pages: int, index: bool) -> tuple[float, float]:
    """Wall and CPU seconds (this process: the store's thread included) the
    store's write path takes for `pages` records."""
    store = SqliteStore(str(path))
    await store.open()
    if not index:
        with sqlite3.connect(path) as db:
            db.execute("DROP INDEX pages_fetched_at")
        db.close()
    wall, cpu = time.perf_counter(), time.process_time()
    for at in range(0, pages, BATCH):
        await store.write([_record(n) for n in range(at, min(at + BATCH, pages))])
    took = time.perf_counter() - wall, time.process_time() - cpu
    await store.close()
    return took


def _write_cost(work: Path, pages: int, rounds: int) -> dict[str, Any]:
    """The write path with and without the index, alternated `rounds` times
    (the machine is shared: the median CPU seconds of each)."""
    runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for k in range(rounds):
        for index in (True, False):
            path = work / f"write-{index}-{k}.db"
            runs[index].append(asyncio.run(_write(path, pages, index)))
            path.unlink()
    return {
        "pages": pages,
        **{
            "with index" if index else "without": {
                "cpu_s": round(statistics.median(c for _, c in took), 2),
                "wall_s": round(statistics.median(w for w, _ in took), 2),
            }
            for index, took in runs.items()
        },
    }


def _index_made_at_open(path: Path) -> float:
    """Seconds the first open of a store from before the index takes to make it."""
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX IF EXISTS pages_fetched_at")
    db.close()

    async def open_close() -> None:
        store = SqliteStore(str(path))
        await store.open()
        await store.close()

    started = time.perf_counter()
    asyncio.run(open_close())
    return time.perf_counter() - started


def run_export(code: Path, store: Path, extra: list[str], cwd: Path) -> dict[str, Any]:
    """One export in a subprocess running `code`'s nadird: rows, wall, CPU, peak RSS."""
    command = [sys.executable, "-c", LAUNCHER, str(code), "export"]
    command += ["--store", f"sqlite:///{store}", "--out", os.devnull, *extra]
    started = time.perf_counter()
    child = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=cwd)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    message = child.stderr.read() if child.stderr is not None else ""
    if status != 0:
        raise SystemExit(f"export failed ({status}): {message}")
    return {
        "rows": int(message.strip().splitlines()[-1].split()[1]),  # "exported N ..."
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
    }


def _runs(code: Path, store: Path, since: float, work: Path) -> dict[str, Any]:
    cursor = work / f"{code.name}.cursor"
    cursor.unlink(missing_ok=True)
    first = run_export(code, store, ["--cursor", str(cursor), "--since", repr(since)], work)
    return {
        "since": run_export(code, store, ["--since", repr(since)], work),
        "cursor first": first,
        "cursor poll": run_export(code, store, ["--cursor", str(cursor)], work),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--new", type=int, default=1000)
    parser.add_argument("--write-pages", type=int, default=20_000)
    parser.add_argument("--write-rounds", type=int, default=3)
    parser.add_argument("--baseline", default="main", help="git ref of the code to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nadird-bench-") as tmp:
        work = Path(tmp)
        store = work / "crawl.db"
        asyncio.run(_write(store, args.pages, index=True))
        write_cost = _write_cost(work, args.write_pages, args.write_rounds)
        size = store.stat().st_size
        index_at_open = _index_made_at_open(store)
        since = T0 + args.pages - args.new
        old = baseline_tree(args.baseline, work / "baseline")
        runs = {
            f"baseline ({args.baseline})": _runs(old, store, since, work),
            "this tree": _runs(REPO, store, since, work),
        }
    print(json.dumps(_summary(args, size, write_cost, index_at_open, runs), indent=2))


def _summary(
    args: argparse.Namespace,
    size: int,
    write_cost: dict[str, Any],
    index_at_open: float,
    runs: dict[str, Any],
) -> dict[str, Any]:
    return {
        **run_facts(),
        "pages": args.pages,
        "new": args.new,
        "store_mib": round(size / 2**20, 1),
        "write_cost": write_cost,
        "index_made_at_open_s": round(index_at_open, 2),
        "runs": runs,
    }


if __name__ == "__main__":
    main()
