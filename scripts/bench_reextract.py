"""Benchmark: `nadird reextract` against the crawl's own parse, per core.

    python scripts/bench_reextract.py [--pages 3000] [--filler-kb 30] [--jobs 2]
                                      [--repeat 3] [--crawl]

The pages are the synthetic web's (nadird.testing.graph, padded with
--filler-kb of realistic text). Each page goes once through the worker's
own page step, `PageProcessor._from_outcome` (decoding, lxml, fields,
schema, links, canonical, checksum), in this process: the crawl's parse
rate, with no network. Its results are stored in a fresh SQLite store as
the master stores them. Then `python -m nadird reextract` runs over that
store as a user runs it, with rules changed (a new field, a processor
removed), with one process and with --jobs N.

Per core means per CPU second, not per wall second: the machine is shared,
and CPU time is what a page costs whatever else runs. The in-process steps
use process_time; a subprocess is charged its children's CPU time
(getrusage), less the CPU of a pass over a job with no pages (start-up,
imports, opening the store). The wall-clock rates are printed too. The
re-extraction step alone (`reextract.core.redo` over the same records, in
this process) tells the parsing from the store's share. The two in-process
steps run --repeat times, interleaved; the median counts.
With --crawl, `nadird crawl` also fetches the same web over loopback (one
worker, no delay): what re-crawling to apply new rules would cost instead.
Prints one JSON object, with the machine and versions, for docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
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
from importlib import metadata
from pathlib import Path
from typing import Any

import lxml.etree

from nadird.common.urls import fingerprint
from nadird.config import FetchConfig
from nadird.job.spec import Job
from nadird.master.results.records import record_from_result
from nadird.reextract.core import Rules
from nadird.reextract.pool import redo_all
from nadird.store.base import PageRecord
from nadird.store.sqlite.store import SqliteStore
from nadird.testing.checks import FIELDS
from nadird.testing.graph import HTML_TYPE, SiteGraph
from nadird.testing.web import run_in_thread
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
    started = time.process_time()
    redo_all(records, rules)
    return len(records) / (time.process_time() - started)


def crawl_parse(pages: list[tuple[str, bytes]], job: Job) -> tuple[float, list[PageRecord]]:
    """The worker's page step over every page; (seconds, the records it makes)."""
    fetch = FetchConfig()
    processor = PageProcessor(Fetcher(fetch), job, fetch, LinkPipeline(job, fetch, DomainCounts()))
    records = []
    spent = 0.0
    for url, body in pages:
        outcome = FetchOutcome(200, url, "text/html", "utf-8", body)
        task = PageTask(url, fingerprint(url), 1)
        started = time.process_time()
        result = processor._from_outcome(task, outcome, time.time(), len(body))
        spent += time.process_time() - started
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


def child_cpu() -> float:
    """CPU seconds of the finished child processes (and the ones they waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def crawl_end_to_end(graph: SiteGraph, workdir: Path, pages: int) -> dict[str, Any]:
    """`nadird crawl` of the same web (1 worker, no delay): what a re-crawl
    would cost, in pages per CPU second of the crawl's processes."""
    config = workdir / "crawl.yaml"
    config.write_text(json.dumps({"jobs": {"default": {"fields": FIELDS, "schema": SCHEMA}}}))
    with run_in_thread(graph):
        command = [
            sys.executable, "-m", "nadird", "crawl", *graph.seeds(), "-c", str(config),
            "--resolve", "*.test=127.0.0.1", "--allow-private", "--delay", "0",
            "--workers", "1", "--max-pages", str(pages), "--store",
            f"sqlite:///{workdir / 'crawl.db'}", "--log-level", "warning",
        ]  # fmt: skip
        cpu = child_cpu()
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=workdir)
        cpu = child_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"crawl failed ({done.returncode}): {done.stderr[-2000:]}")
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "pages": summary["pages"],
        "pages_per_s": summary["pages_per_s"],
        "cpu_s": round(cpu, 2),
        "pages_per_cpu_s": round(summary["pages"] / cpu, 1),
    }


def reextract(
    workdir: Path, config: Path, jobs: int, fixed_cpu: float = 0.0, job: str = "default"
) -> dict[str, Any]:
    """One pass as a subprocess; `fixed_cpu` (start-up, imports, opening the
    store) is left out of the per-page CPU rate."""
    command = [
        sys.executable, "-m", "nadird", "reextract", "--job", job, "-c", str(config),
        "--jobs", str(jobs), "--restart", "--log-level", "warning",
    ]  # fmt: skip
    started, cpu = time.perf_counter(), child_cpu()
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=workdir)
    wall, cpu = time.perf_counter() - started, child_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"reextract failed ({done.returncode}): {done.stderr[-2000:]}")
    summary: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    summary["process_wall_s"] = round(wall, 3)
    summary["process_cpu_s"] = round(cpu, 2)  # start-up (imports) included
    summary["pages_per_cpu_s"] = round(summary["read"] / max(cpu - fixed_cpu, 1e-3), 1)
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
    parser.add_argument("--repeat", type=int, default=3, help="runs of the in-process steps")
    parser.add_argument(
        "--crawl", action="store_true", help="also crawl the same web end to end, for scale"
    )
    args = parser.parse_args()
    graph = SiteGraph(hosts=10, pages=args.pages // 10 + 50, filler_kb=args.filler_kb)
    pages = pages_of(graph, args.pages)
    old = Job.from_wire({"fields": FIELDS, "schema": SCHEMA})
    new = Job.from_wire({"fields": NEW_FIELDS, "schema": NEW_SCHEMA})
    crawl_rates, alone_rates = [], []
    for _ in range(args.repeat):
        spent, records = crawl_parse(pages, old)
        crawl_rates.append(len(pages) / spent)
        alone_rates.append(step_alone(records, new))
    crawl_rate, alone = statistics.median(crawl_rates), statistics.median(alone_rates)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        asyncio.run(store_records(workdir / "bench.db", records))
        config = workdir / "new.yaml"
        jobs = {"default": {"fields": NEW_FIELDS, "schema": NEW_SCHEMA}, "empty": {}}
        store = {"uri": f"sqlite:///{workdir / 'bench.db'}"}
        config.write_text(json.dumps({"store": store, "jobs": jobs}))
        fixed = reextract(workdir, config, 1, job="empty")["process_cpu_s"]
        one = reextract(workdir, config, 1, fixed)
        many = reextract(workdir, config, args.jobs, fixed)
        crawl = crawl_end_to_end(graph, workdir, len(pages)) if args.crawl else None
    per_core = {n: run["pages_per_cpu_s"] for n, run in ((1, one), (args.jobs, many))}
    report = {
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        **machine(),
        "pages": len(pages),
        "mean_body_kb": round(sum(len(b) for _, b in pages) / len(pages) / 1024, 1),
        "reextract_fixed_cpu_s": fixed,
        "crawl_parse_pages_per_cpu_s": round(crawl_rate, 1),
        "reextract_step_alone_pages_per_cpu_s": round(alone, 1),
        "reextract_1": one,
        f"reextract_{args.jobs}": many,
        "crawl_end_to_end": crawl,
        "ratio_per_core": {f"{n} processes": round(v / crawl_rate, 2) for n, v in per_core.items()},
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
