"""Following news sites: how soon `nadird crawl` with `feeds: true` has each
new article, at a polite rate, on a living news web (nadird.testing.news).

The sites publish every --min-period..--max-period seconds (seeded), each
found its own way (RSS, Atom, JSON Feed, RDF, a Google News sitemap listed
in robots.txt, only a home page), with endless archive and tag pagination as
noise. The crawl runs for --seconds with --delay between two requests to a
site; then the server's access log is judged (nadird.testing.news_judge) for
the articles that appeared between --warmup and --tail seconds before the
end: the share fetched, the latency from appearing to fetched (median, p90),
the share of requests that went to archive pages past their first, and the
shortest gap between two requests to one site.

    python scripts/bench_news.py --sites 5 --seconds 90
    python scripts/bench_news.py --sites 100 --min-period 30 --max-period 90 --seconds 120

Needs psutil (test extra): the crawl process's CPU is the master's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version

import psutil

from nadird.testing.living import ScaledClock
from nadird.testing.news import NewsWeb, news_sites
from nadird.testing.news_judge import judge_news
from nadird.testing.web import run_in_thread

CONFIG = """\
master:
  revisit_allocate_interval: {allocate_every}
fetch:
  allow_private: true
  resolve: {{'*.test': 127.0.0.1}}
jobs:
  default:
    feeds: {{revisit: {hub_revisit}}}
    delay: {delay}
    links: {{scope: same-domain}}
    max_depth: 4
"""


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=5)
    parser.add_argument("--min-period", type=float, default=4.0)
    parser.add_argument("--max-period", type=float, default=25.0)
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--warmup", type=float, default=15.0)
    parser.add_argument("--tail", type=float, default=10.0)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--hub-min", default="1s")
    parser.add_argument("--hub-max", default="1m")
    parser.add_argument("--hub-every", help="hubs on a fixed interval instead (e.g. 10s)")
    parser.add_argument(
        "--allocate-every", type=float, default=60.0, help="master.revisit_allocate_interval"
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backlog", type=int, default=30, help="articles per site at the start")
    return parser.parse_args()


def main() -> int:
    args = _args()
    sites = news_sites(args.sites, (args.min_period, args.max_period), args.seed, args.backlog)
    with tempfile.TemporaryDirectory() as tmp, run_in_thread() as server:
        news = NewsWeb(sites, ScaledClock(1.0)).install(server)
        config = os.path.join(tmp, "news.yaml")
        with open(config, "w", encoding="utf-8") as file:
            text = CONFIG.format(
                hub_revisit=_hub_revisit(args), delay=args.delay, allocate_every=args.allocate_every
            )
            file.write(text)
        command = [
            sys.executable, "-m", "nadird", "crawl", "-c", config,
            "--for", f"{args.seconds}s", "--workers", str(args.workers),
            "--store", f"sqlite:///{tmp}/news.db", "--log-level", "warning", *news.seeds(),
        ]  # fmt: skip
        started = time.time()
        returncode, stdout, stderr, master_cpu = _run(command, args.seconds + 120)
        ended = time.time()
        summary = stdout.strip().splitlines()[-1:] or [stderr[-500:]]
        report = judge_news(
            news,
            server.entries(),
            started + args.warmup,
            started + args.seconds - args.tail,
            args.delay,
        )
    crawl = json.loads(summary[0]) if summary[0].startswith("{") else summary[0]
    checks = crawl.get("revisits", {}).get("checks", 0) if isinstance(crawl, dict) else 0
    result = {
        "sites": args.sites,
        "periods": [args.min_period, args.max_period],
        "backlog": args.backlog,
        "warmup": args.warmup,
        "seconds": args.seconds,
        "delay": args.delay,
        "hub_revisit": _hub_revisit(args),
        "allocate_every": args.allocate_every,
        "wall": round(ended - started, 1),
        **report.to_dict(),
        # `nadird crawl` runs the master in its own process (workers are
        # children): its CPU is the master's, store writer included.
        "master_cpu_s": round(master_cpu, 2),
        "hub_checks": checks,
        "master_cpu_ms_per_request": round(1000 * master_cpu / max(1, report.requests), 3),
        "master_cpu_ms_per_hub_check_upper": round(1000 * master_cpu / max(1, checks), 3),
        "crawl": crawl,
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "python": platform.python_version(),
        "nadird": version("nadird"),
        "fastfeedparser": version("fastfeedparser"),
    }
    print(json.dumps(result, indent=2))
    return 0 if returncode == 0 else 1


def _hub_revisit(args: argparse.Namespace) -> str:
    if args.hub_every:
        return f"{{every: {args.hub_every}}}"
    return f"{{adaptive: {{min: {args.hub_min}, max: {args.hub_max}, initial: {args.hub_min}}}}}"


def _run(command: list[str], timeout: float) -> tuple[int, str, str, float]:
    """Run the crawl; its exit status, output and its own CPU seconds (read
    until it ends: a process gone can no longer be asked)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, stdout=out, stderr=err, text=True)
        watched = psutil.Process(proc.pid)
        cpu, deadline = 0.0, time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(psutil.Error):
                times = watched.cpu_times()
                cpu = times.user + times.system
            time.sleep(0.2)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read(), cpu


if __name__ == "__main__":
    sys.exit(main())
