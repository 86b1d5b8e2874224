"""Benchmark: `nadird reextract` against the crawl's own parse, per core.

    python scripts/bench_reextract.py [--pages 3000] [--filler-kb 30] [--jobs 2]

The pages are the synthetic web's (nadird.testing.graph, padded with
--filler-kb of realistic text so they weigh what shop pages do). Each page
goes once through the worker's own page step, `PageProcessor._from_outcome`
(decoding, lxml, fields, schema, links, canonical, checksum), in this
process and on one core: that is the crawl's parse rate, timed alone, with
no network. Its results are stored in a fresh SQLite store the way the
master stores them. Then `python -m nadird reextract` runs over that store
as a user runs it, with a rule changed (a new field and a processor
removed), once with one process and once with --jobs N; its own summary
gives pages/s (the wall clock of the pass, reads and writes included). The re-extraction
step alone (`reextract.core.redo` in this process, on the same stored
records) is timed too, to tell the parsing from the store's share.
Prints one JSON object, with the machine and versions, for docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import lxml.etree

from nadird.config import FetchConfig
from nadird.jobs import Job
from nadird.master.results.records import record_from_result
from nadird.reextract.core import Rules
from nadird.reextract.pool import redo_all
from nadird.store.base import PageRecord
from nadird.store.sqlite.store import SqliteStore
from nadird.testing.checks import FIELDS
from nadird.testing.graph import HTML_TYPE, SiteGraph
from nadird.urls import fingerprint
from nadird.worker.fetch.fetcher import Fetcher, FetchOutcome
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask

SCHEMA: dict[str, Any] = {
    "title": {"type": "string", "required": True, "process": ["strip"]},
    "price": {"type": "number", "process": ["strip", "number"]},
}
NEW_FIELDS: dict[str, Any] = {**FIELDS, "heading": [{"xpath": "//h1"}]}
NEW_SCHEMA: dict[str, Any] = {**SCHEMA, "price": {"process": ["strip"]}}


def pages_of(graph: SiteGraph, count: int) -> list[tuple[str, bytes]]:
    found = []
    for url in graph.all_pages():
        if graph.status_of(url) != 200 or graph.content_type_of(url) != HTML_TYPE:
            continue
        host, path = url.split("/", 3)[2], "/" + url.split("/", 3)[3]
        html = graph.html(host, path)
        if html is not None:
            found.append((url, html.encode()))
        if len(found) == count:
            break
    return found


def step_alone(records: list[PageRecord], job: Job) -> float:
    """Re-extraction's own page step (reextract.core.redo) over the stored
    records, in this process: pages/s without the store's reads and writes."""
    rules = Rules.of(job, ["text/html"])
    started = time.perf_counter()
    redo_all(records, rules)
    return len(records) / (time.perf_counter() - started)


def crawl_parse(pages: list[tuple[str, bytes]], job: Job) -> tuple[float, list[PageRecord]]:
    """The worker's page step over every page; (seconds, the records it makes)."""
    fetch = FetchConfig()
    processor = PageProcessor(Fetcher(fetch), job, fetch, LinkPipeline(job, fetch, DomainCounts()))
    records = []
    spent = 0.0
    for url, body in pages:
        outcome = FetchOutcome(200, url, "text/html", "utf-8", body)
        task = PageTask(url, fingerprint(url), 1)
        started = time.perf_counter()
        result = processor._from_outcome(task, outcome, time.time(), len(body))
        spent += time.perf_counter() - started
        records.append(record_from_result(result, job.name, "bench"))
    return spent, records


async def store_records(path: Path, records: list[PageRecord]) -> None:
    store = SqliteStore(str(path))
    await store.open()
    try:
        for i in range(0, len(records), 500):
            await store.write(records[i : i + 500])
    finally:
        await store.close()


def reextract(workdir: Path, config: Path, jobs: int) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "nadird", "reextract", "--job", "default", "-c", str(config),
        "--jobs", str(jobs), "--restart", "--log-level", "warning",
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=workdir)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"reextract failed ({done.returncode}): {done.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    summary["process_wall_s"] = round(wall, 3)
    summary["pages_per_s_per_core"] = round(summary["pages_per_s"] / jobs, 1)
    return summary


def machine() -> dict[str, Any]:
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "lxml": ".".join(map(str, lxml.etree.LXML_VERSION)),
        "nadird": metadata.version("nadird"),
        "load_avg": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--filler-kb", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2, help="processes of the second pass")
    args = parser.parse_args()
    graph = SiteGraph(hosts=10, pages=args.pages // 10 + 50, filler_kb=args.filler_kb)
    pages = pages_of(graph, args.pages)
    old = Job.from_wire({"fields": FIELDS, "schema": SCHEMA})
    spent, records = crawl_parse(pages, old)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        asyncio.run(store_records(workdir / "bench.db", records))
        config = workdir / "new.yaml"
        jobs = {"default": {"fields": NEW_FIELDS, "schema": NEW_SCHEMA}}
        store = {"uri": f"sqlite:///{workdir / 'bench.db'}"}
        config.write_text(json.dumps({"store": store, "jobs": jobs}))
        one = reextract(workdir, config, 1)
        many = reextract(workdir, config, args.jobs)
    crawl_rate = len(pages) / spent
    alone = step_alone(records, Job.from_wire({"fields": NEW_FIELDS, "schema": NEW_SCHEMA}))
    per_core = {n: run["pages_per_s_per_core"] for n, run in ((1, one), (args.jobs, many))}
    report = {
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        **machine(),
        "pages": len(pages),
        "mean_body_kb": round(sum(len(b) for _, b in pages) / len(pages) / 1024, 1),
        "crawl_parse_pages_per_s_per_core": round(crawl_rate, 1),
        "reextract_step_alone_pages_per_s": round(alone, 1),
        "reextract_1": one,
        f"reextract_{args.jobs}": many,
        "ratio_per_core": {f"{n} processes": round(v / crawl_rate, 2) for n, v in per_core.items()},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
