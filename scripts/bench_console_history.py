"""Benchmark: the console's time-axis pages at scale, and what their rings weigh.

    python scripts/bench_console_history.py [--domains 100000] [--versions 10000]
                                            [--rounds 20]

A real master in this process (its API on loopback), with --domains domains
queued, a URL with --versions versions in its SQLite store (inserted into
the `changes` table in one transaction: the store's write path would take
far longer), the chart rings full (648 samples with ten error kinds) and
the ring of recent fetches full (5,000 fetches across the domains). A
signed-in client (cookie and key, as console.js sends them) then asks each
page --rounds times; prints the median and the slowest answer per page
and the CPU time per answer (less stretched by a loaded machine), and
the memory of the full rings (tracemalloc), as one JSON object for
docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from support.console_helpers import config, http, login

from nadird.common.urls import fingerprint
from nadird.config import ConsoleConfig
from nadird.master.observe.history import (
    COARSE_EVERY,
    COARSE_SAMPLES,
    FINE_SAMPLES,
    Sample,
    StatsHistory,
)
from nadird.master.results.recent import RECENT_FETCHES, PageLog
from nadird.master.service.server import Master
from nadird.protocol.messages import PageResult
from nadird.store.base import PageRecord
from nadird.store.open import open_store

URL = "http://d7.test/product/1"
KINDS = [f"kind_{n}" for n in range(10)]


def fill_history(history: StatsHistory) -> None:
    samples = FINE_SAMPLES + COARSE_EVERY * COARSE_SAMPLES
    for n in range(samples):
        errors = {kind: n * (k + 1) for k, kind in enumerate(KINDS)}
        history.add(Sample(1e9 + n * 10.0, n * 40, Sample.errors_of(errors), 10**6 - n, 50, 300, 2))


def page_result(n: int) -> PageResult:
    url = f"http://d{n % 1000}.test/page/{n}"
    return PageResult(url=url, fp=fingerprint(url), final_url=url, status=200, fetched_at=1e9,
                      depth=1, size=20_000, elapsed=0.2)  # fmt: skip


def ring_memory() -> dict[str, float]:
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    history = StatsHistory(10.0)
    fill_history(history)
    middle = tracemalloc.take_snapshot()
    log = PageLog()
    results = [page_result(n) for n in range(RECENT_FETCHES)]
    made = tracemalloc.take_snapshot()
    for result in results:
        log.observe(result)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()

    def grown(a: Any, b: Any) -> float:
        return round(float(sum(s.size_diff for s in b.compare_to(a, "filename"))) / 1e6, 3)

    # The fetches ring holds the results' URLs, which the results made: counted
    # as the ring's (they live as long as its entries do).
    urls = sum(sys.getsizeof(r.url) for r in results) / 1e6
    return {
        "history_rings_mb": grown(before, middle),
        "history_samples": len(history.fine) + len(history.coarse),
        "fetches_ring_mb": round(grown(made, after) + urls, 3),
        "fetches_kept": len(log.fetches),
    }


def add_versions(store_path: str, count: int) -> None:
    with sqlite3.connect(store_path) as db:
        db.executemany(
            "INSERT INTO changes (url, job, fetched_at, signature, data) VALUES (?, ?, ?, ?, ?)",
            [
                (URL, "default", 1e9 + n * 60.0, f"s{n}",
                 json.dumps({"price": f"{100 + n % 50}.00", "title": f"Kettle model {n % 7}"}))
                for n in range(count)
            ],
        )  # fmt: skip


async def timed(client: Any, url: str, rounds: int) -> dict[str, float]:
    """Wall time per answer, and CPU time per answer: the process's (the
    master's threads and the client's), which a loaded machine stretches far
    less than the wall time."""
    times = []
    cpu = time.process_time()
    for _ in range(rounds):
        start = time.perf_counter()
        async with client.get(url) as response:
            await response.read()
            assert response.status == 200, (url, response.status)
        times.append((time.perf_counter() - start) * 1000)
    cpu_ms = (time.process_time() - cpu) * 1000 / rounds
    return {
        "median_ms": round(statistics.median(times), 1),
        "max_ms": round(max(times), 1),
        "cpu_ms": round(cpu_ms, 1),
    }


async def run(domains: int, versions: int, rounds: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-console-"))
    cfg = config(tmp, console=ConsoleConfig())
    store = open_store(cfg.store.uri, cfg.store)
    await store.open()
    record = PageRecord(url=URL, fp=fingerprint(URL), final_url=URL, depth=0, job="default",
                        fetched_at=1e9, status=200, body=b"<p>kettle</p>" * 2000,
                        data={"price": "100.00"}, signature="s")  # fmt: skip
    await store.write([record])
    add_versions(str(tmp / "store.db"), versions - 1)
    master = Master(cfg, store)
    urls = [f"http://d{n}.test/{i}" for n in range(domains) for i in range(1 + (n % 3 == 0))]
    master.core.admission.admit("default", urls, [fingerprint(u) for u in urls], 0)
    master.core.frontier.db.commit()
    fill_history(master.history)
    for n in range(RECENT_FETCHES):
        master.core.page_log.observe(page_result(n))
    await master.start()
    assert master.api is not None
    base = master.api.url
    u = quote(URL, safe="")
    pages = {
        "crawl page (/ui)": "/ui",
        "/api/stats/history (hour)": "/api/stats/history",
        "/api/stats/history (day)": "/api/stats/history?window=day",
        "URL page, newest versions": f"/ui/url?u={u}",
        "URL page, oldest versions": f"/ui/url?u={u}&page={versions // 20 + 1}",
        "raw page (26 KB body)": f"/ui/url/raw?u={u}",
        "domain page": "/ui/domain?d=d7.test",
        "domains table, page 2000 by errors": "/ui/domains?sort=errors&page=2000",
    }
    try:
        async with http() as client:
            await login(client, base)
            times = {name: await timed(client, base + path, rounds) for name, path in pages.items()}
    finally:
        await master.stop()
        await store.close()
    return {"domains": domains, "versions": versions, "rounds": rounds, "pages": times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domains", type=int, default=100_000)
    parser.add_argument("--versions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    result = asyncio.run(run(args.domains, args.versions, args.rounds))
    result["memory"] = ring_memory()
    result["python"] = platform.python_version()
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
