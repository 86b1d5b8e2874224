"""Benchmark: history retention on a real SQLite store, and what it costs
the store writer meanwhile.

    python scripts/bench_history_trim.py [--urls 20000] [--versions 30] [--batches 200]

Fills the `changes` table of a store made by `SqliteStore.open` with
--versions versions of each of --urls pages, two days apart (one INSERT per
version, one transaction: the write path would add pages and take far
longer), then runs a round of `keep_for: 30d` (half the versions go) step
by step as the master does (HistoryRetention, 50 ms between steps), while a
writer task stores a batch of 100 pages every 20 ms through
`SqliteStore.write`, as the master's writer does. Prints one JSON object:
the steps' times, and the writes' latency with the trim running and with
it idle, for docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sqlite3
import statistics
import tempfile
import time
from collections import Counter
from typing import Any

from nadird.config import Config
from nadird.job.history import HistoryKeep
from nadird.job.spec import Job
from nadird.master.results.retention import HistoryRetention
from nadird.store.base import PageRecord
from nadird.store.retention import Keep, TrimStep
from nadird.store.sqlite.store import SqliteStore

DAY = 86400.0


def fill(path: str, urls: int, versions: int, now: float) -> None:
    with sqlite3.connect(path) as conn:
        rows = (
            (
                f"https://shop.example.com/product/{u:07d}",
                "shop",
                now - (versions - v) * 2 * DAY,
                f"{u}-{v}",
                json.dumps({"title": f"Product {u}", "price": 100 + v, "stock": v}),
            )
            for u in range(urls)
            for v in range(versions)
        )
        conn.executemany(
            "INSERT INTO changes (url, job, fetched_at, signature, data) VALUES (?, ?, ?, ?, ?)",
            rows,
        )


def page(i: int, now: float) -> PageRecord:
    url = f"https://other.example.com/p/{i}"
    return PageRecord(
        url=url,
        fp=hashlib.blake2b(url.encode(), digest_size=16).digest(),
        final_url=url,
        status=200,
        fetched_at=now,
        job="other",
        depth=1,
        content_type="text/html",
        data={"title": f"p{i}"},
        body=b"<html><body>" + b"x" * 2000 + b"</body></html>",
    )


class Timed:
    """The store's trim_history, each step timed."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.steps: list[float] = []

    async def trim_history(self, keep: Keep, after: str | None, limit: int) -> TrimStep:
        started = time.perf_counter()
        step = await self.store.trim_history(keep, after, limit)
        self.steps.append(time.perf_counter() - started)
        return step


async def writes(store: SqliteStore, stop: asyncio.Event, batches: int) -> list[float]:
    took: list[float] = []
    n = 0
    while not stop.is_set() and len(took) < batches:
        batch = [page(n + i, time.time()) for i in range(100)]
        n += 100
        started = time.perf_counter()
        await store.write(batch)
        took.append(time.perf_counter() - started)
        await asyncio.sleep(0.02)
    return took


def latency(took: list[float]) -> dict[str, float]:
    ms = sorted(t * 1000 for t in took)
    return {
        "batches": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p99_ms": round(ms[int(len(ms) * 0.99) - 1], 1),
        "max_ms": round(ms[-1], 1),
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    now = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "store.db")
        store = SqliteStore(path)
        await store.open()
        await store.close()
        fill(path, args.urls, args.versions, now)
        size = os.path.getsize(path)
        await store.open()
        try:
            idle = await writes(store, asyncio.Event(), args.batches)
            job = Job(name="shop", revisit={"every": "1h"}, history=HistoryKeep(keep_for="30d"))
            config = Config(jobs={"shop": job})
            timed = Timed(store)
            retention = HistoryRetention(timed, lambda: config, Counter())
            stop = asyncio.Event()
            writer = asyncio.ensure_future(writes(store, stop, 10**9))
            started = time.perf_counter()
            trimmed = await retention.round()
            seconds = time.perf_counter() - started
            stop.set()
            busy = await writer
        finally:
            await store.close()
    steps = sorted(s * 1000 for s in timed.steps)
    return {
        "versions": args.urls * args.versions,
        "urls": args.urls,
        "bytes_per_version": round(size / (args.urls * args.versions)),
        "trimmed": trimmed,
        "round_seconds": round(seconds, 2),
        "steps": len(steps),
        "step_mean_ms": round(statistics.fmean(steps), 1),
        "step_max_ms": round(steps[-1], 1),
        "writes_idle": latency(idle),
        "writes_during_trim": latency(busy),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=20000)
    parser.add_argument("--versions", type=int, default=30)
    parser.add_argument("--batches", type=int, default=200)
    print(json.dumps(asyncio.run(main(parser.parse_args()))))
