"""End to end: `nadird crawl` (1 master + N workers) against a Scrapy spider.

Starts the synthetic web in a process of its own, then crawls it in
alternation, nadird then Scrapy, `--pairs` times, with the same seeds, scope
(the site hosts), fields, no robots.txt, no delay and the same concurrency
per host. Each run is checked against the synthetic web's reachable set
(canonical URLs): both crawlers must store exactly that set, once per URL.

CPU is the user+sys time of the crawler's whole process tree, from
os.wait4() on its top process: the kernel adds every descendant that was
waited for (nadird's worker processes; Scrapy's threads are in-process). The
web server's own CPU is reported apart: it is the same for both.

    python scripts/bench_vs_scrapy.py --hosts 20 --pages 500 --pairs 3

`--profile DIR` instead runs each crawler once under py-spy (all processes)
and prints the hottest functions; those runs are not timed.
Needs the `bench` extra (Scrapy) and, for --profile, py-spy.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil
import yaml
from bench_common import Throughput  # scripts/: on sys.path when run as a script
from pyspy_top import top_functions

from nadird.testing.graph import SiteGraph

HERE = Path(__file__).resolve().parent
SPIDER = HERE / "bench_scrapy_spider.py"
RUN_TIMEOUT = 900.0  # seconds: a crawl that takes longer than this is killed

# The job both crawlers do: these four fields from every HTML page.
FIELDS = {
    "title": [{"css": "title"}],
    "h1": [{"css": "h1"}],
    "price": [{"css": "span.price"}],
    "sku": [{"xpath": '//meta[@name="sku"]/@content'}],
}


Server = subprocess.Popen[str]


@dataclass
class Run(Throughput):
    crawler: str
    pair: int
    seconds: float
    cpu_seconds: float
    server_cpu_seconds: float
    records: int
    distinct_urls: int
    same_as_expected: bool
    load_1min: float


# ------------------------------------------------------------------ server


@contextlib.contextmanager
def synthetic_web(args: argparse.Namespace) -> Iterator[tuple[Server, dict[str, Any]]]:
    command = [
        sys.executable, "-m", "nadird.testing.web",
        "--hosts", str(args.hosts), "--pages", str(args.pages),
        "--filler-kb", str(args.filler_kb), "--links-per-page", str(args.links_per_page),
        "--latency", str(args.latency), "--seed", str(args.seed), "--port", "0",
    ]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        yield proc, info
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def expected_urls(args: argparse.Namespace, port: int, hosts: list[str]) -> set[str]:
    """Canonical URLs a crawl confined to the site hosts reaches (robots off)."""
    graph = SiteGraph(
        hosts=args.hosts,
        pages=args.pages,
        port=port,
        links_per_page=args.links_per_page,
        seed=args.seed,
        filler_kb=args.filler_kb,
    )
    allowed = set(hosts)
    reach = graph.reachable(graph.seeds(), lambda url: urlsplit(url).hostname in allowed)
    return set(reach)


def canonical(url: str) -> str:
    """Lower-case host, port kept, no fragment: enough to compare the two crawlers."""
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{parts.hostname}:{parts.port}{parts.path or '/'}{query}"


# ---------------------------------------------------------------- crawlers


def nadird_command(args: argparse.Namespace, info: dict[str, Any], work: Path) -> list[str]:
    config = {
        "log_level": "warning",
        "jobs": {"default": {"robots": False, "fields": FIELDS}},
        "worker": {"bags": args.bags},
        "fetch": {
            # Scrapy keeps no bodies either; --store-bodies measures nadird's default.
            "store_body_bytes": 2 * 1024 * 1024 if args.store_bodies else 0,
            # Scrapy's AutoThrottle is off by default: so is nadird's here.
            "throttle": {"adaptive": False},
        },
    }
    path = work / "nadird.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    command = [
        shutil.which("nadird") or "nadird", "crawl", *info["seeds"],
        "--config", str(path), "--workers", str(args.workers),
        "--resolve", "*.test=127.0.0.1", "--allow-private", "--delay", "0",
        "--domain-concurrency", str(args.per_domain),
        "--store", f"sqlite:///{work / 'nadird.db'}", "--state-dir", str(work / "state"),
        "--log-level", "warning",
    ]  # fmt: skip
    for host in info["hosts"]:
        command += ["--allow-domain", host]
    return command


def nadird_urls(work: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(work / "nadird.db")) as db:
        return [url for (url,) in db.execute("SELECT url FROM pages")]


def scrapy_command(args: argparse.Namespace, info: dict[str, Any], work: Path) -> list[str]:
    seeds = work / "seeds.txt"
    seeds.write_text("\n".join(info["seeds"]) + "\n", encoding="utf-8")
    return [
        sys.executable, str(SPIDER), "--seeds-file", str(seeds),
        "--hosts", ",".join(info["hosts"]), "--out", str(work / "scrapy.jsonl"),
        "--concurrency", str(args.per_domain * len(info["hosts"])),
        "--per-domain", str(args.per_domain),
    ]  # fmt: skip


def scrapy_urls(work: Path) -> list[str]:
    with open(work / "scrapy.jsonl", encoding="utf-8") as feed:
        return [json.loads(line)["url"] for line in feed if line.strip()]


def timed(command: list[str], log: Path) -> tuple[float, float]:
    """(wall seconds, user+sys CPU seconds of the process and its descendants)."""
    started = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    deadline = started + RUN_TIMEOUT
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            raise RuntimeError(f"{command[0]} ran longer than {RUN_TIMEOUT}s; see {log}")
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{command[:2]} exited {proc.returncode}; see {log}")
    return seconds, usage.ru_utime + usage.ru_stime


def server_cpu(proc: Server) -> float:
    times = psutil.Process(proc.pid).cpu_times()
    return float(times.user + times.system)


def run_one(
    crawler: str,
    pair: int,
    args: argparse.Namespace,
    web: Server,
    info: dict[str, Any],
    expected: set[str],
) -> Run:
    work = Path(tempfile.mkdtemp(prefix=f"bench-{crawler}-", dir=args.workdir))
    if crawler == "nadird":
        command, urls_of = nadird_command(args, info, work), nadird_urls
    else:
        command, urls_of = scrapy_command(args, info, work), scrapy_urls
    load = os.getloadavg()[0]
    before = server_cpu(web)
    seconds, cpu = timed(command, work / "crawl.log")
    urls = urls_of(work)
    found = {canonical(u) for u in urls}
    run = Run(
        crawler=crawler,
        pair=pair,
        seconds=round(seconds, 3),
        cpu_seconds=round(cpu, 3),
        server_cpu_seconds=round(server_cpu(web) - before, 3),
        records=len(urls),
        distinct_urls=len(found),
        same_as_expected=found == expected and len(urls) == len(found),
        load_1min=round(load, 2),
    )
    if not run.same_as_expected:
        missing, extra = sorted(expected - found)[:5], sorted(found - expected)[:5]
        print(f"  {crawler}: MISMATCH missing {missing} extra {extra}", file=sys.stderr)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return run


# ---------------------------------------------------------------- profiles


def profile(args: argparse.Namespace, info: dict[str, Any]) -> None:
    """One run of each crawler under py-spy; prints the top functions (own time)."""
    out = Path(args.profile)
    out.mkdir(parents=True, exist_ok=True)
    for crawler in ("nadird", "scrapy"):
        work = Path(tempfile.mkdtemp(prefix=f"bench-{crawler}-", dir=args.workdir))
        command = (nadird_command if crawler == "nadird" else scrapy_command)(args, info, work)
        raw = out / f"{crawler}.txt"
        spy = ["py-spy", "record", "--subprocesses", "--format", "raw", "--rate", "200",
               "--nonblocking", "--function", "-o", str(raw), "--"]  # fmt: skip
        timed(spy + command, work / "crawl.log")
        print(f"== {crawler}: top functions by own samples ({raw})")
        for line in top_functions(raw, args.top):
            print(line)
        shutil.rmtree(work, ignore_errors=True)


# -------------------------------------------------------------------- main


def machine() -> dict[str, Any]:
    import scrapy

    from nadird import __version__

    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "nadird": __version__,
        "scrapy": scrapy.__version__,
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def summarize(runs: list[Run]) -> dict[str, Any]:
    pairs = sorted({r.pair for r in runs})
    ratios = []
    for pair in pairs:
        n = next(r for r in runs if r.pair == pair and r.crawler == "nadird")
        s = next(r for r in runs if r.pair == pair and r.crawler == "scrapy")
        ratios.append(
            {
                "pair": pair,
                "pages_per_s": round(n.pages_per_s / s.pages_per_s, 2),
                "pages_per_cpu_s": round(n.pages_per_cpu_s / s.pages_per_cpu_s, 2),
            }
        )
    return {
        "ratios": ratios,
        "median_pages_per_s_ratio": statistics.median(r["pages_per_s"] for r in ratios),
        "median_pages_per_cpu_s_ratio": statistics.median(r["pages_per_cpu_s"] for r in ratios),
        "all_runs_same_as_expected": all(r.same_as_expected for r in runs),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--pages", type=int, default=500, help="HTML pages per host")
    parser.add_argument("--filler-kb", type=int, default=60, help="padding per page (KB)")
    parser.add_argument("--links-per-page", type=int, default=60)
    parser.add_argument("--latency", type=float, default=0.0, help="server seconds per response")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pairs", type=int, default=3, help="nadird/Scrapy pairs, alternated")
    parser.add_argument("--workers", type=int, default=2, help="nadird worker processes")
    parser.add_argument("--bags", type=int, default=16, help="bags per nadird worker")
    parser.add_argument("--per-domain", type=int, default=2, help="requests in flight per host")
    parser.add_argument("--store-bodies", action="store_true", help="nadird keeps page bodies")
    parser.add_argument("--workdir", default=None, help="where the stores go (default: /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep each run's files")
    parser.add_argument("--profile", metavar="DIR", help="profile one run of each, untimed")
    parser.add_argument("--top", type=int, default=25, help="functions listed per profile")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be >= 1")
    with synthetic_web(args) as (web, info):
        if args.profile:
            profile(args, info)
            return 0
        expected = {canonical(u) for u in expected_urls(args, info["port"], info["hosts"])}
        header = {**machine(), "expected_pages": len(expected), "args": vars(args)}
        print(json.dumps(header), flush=True)
        runs: list[Run] = []
        for pair in range(1, args.pairs + 1):
            for crawler in ("nadird", "scrapy"):
                run = run_one(crawler, pair, args, web, info, expected)
                runs.append(run)
                print(json.dumps(run.to_dict()), flush=True)
        summary = summarize(runs)
        print(json.dumps({**summary, "load_at_end": [round(x, 2) for x in os.getloadavg()]}))
        return 0 if summary["all_runs_same_as_expected"] else 1


if __name__ == "__main__":
    sys.exit(main())
