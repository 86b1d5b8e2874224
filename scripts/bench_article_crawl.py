"""Benchmark: pages per CPU-second of `nadird crawl` with and without `article: true`.

    python scripts/bench_article_crawl.py [--trees python] [--pairs 2]

The same real pages both ways: nginx serves Debian's doc trees (as in
scripts/bench_real_site.py, whose site, nginx and checks this reuses), and
nadird crawls them twice per pair, in turn: once with the job of that
benchmark (the <title> as a field), once with `article: true` added. Every
run is checked as there (every page of the offline walk stored once,
requested once); the article runs' pages are counted by their `kind`, or
by the reason their extraction was given up (`_article`, e.g. over_budget).

Measured per run: wall time, CPU seconds of nadird's whole process tree
(master and workers), pages per CPU-second; per pair, the article run's CPU
per page beyond the plain run's. Prints JSON lines: one per run, then a
summary with the medians and the kinds the article runs found.

Needs the `bench` extra, nginx at /usr/sbin/nginx and the doc packages
(see scripts/bench_real_site.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from bench_real_run import COMMANDS, Run, Site, nadird_command, nginx, run_one
from bench_real_site import expected_pages, site_of, versions


def article_command(args: argparse.Namespace, site: Site, work: Path) -> list[str]:
    """The benchmark's nadird command, its job given `article: true` as well."""
    command = nadird_command(args, site, work)
    config_path = work / "nadird.yaml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config["jobs"]["default"]["article"] = True
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return command


COMMANDS["nadird-article"] = article_command


def kinds(work: Path) -> Counter[str]:
    """Stored pages per kind, or per reason given up (`none`: neither, not HTML)."""
    with contextlib.closing(sqlite3.connect(work / "nadird.db")) as db:
        rows = db.execute(
            "SELECT json_extract(data, '$.kind'), json_extract(data, '$._article') FROM pages"
        ).fetchall()
    return Counter(
        str(kind or (reason and f"given up: {reason}") or "none") for kind, reason in rows
    )


def summarize(runs: list[Run], kinds_seen: Counter[str]) -> dict[str, Any]:
    plain = [r for r in runs if r.crawler == "nadird"]
    article = [r for r in runs if r.crawler == "nadird-article"]
    extra_ms = [
        (a.cpu_seconds - p.cpu_seconds) / a.records * 1000
        for p, a in zip(plain, article, strict=True)
    ]
    return {
        "all_runs_correct": all(r.correct for r in runs),
        "median_pages_per_cpu_s": {
            "without_article": round(statistics.median(r.pages_per_cpu_s for r in plain), 1),
            "with_article": round(statistics.median(r.pages_per_cpu_s for r in article), 1),
        },
        "article_cpu_ms_per_page": [round(x, 2) for x in extra_ms],
        "median_article_cpu_ms_per_page": round(statistics.median(extra_ms), 2),
        "kinds_in_article_runs": dict(kinds_seen),
        "load_at_end": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", default="python", help="comma-separated doc trees")
    parser.add_argument("--port", type=int, default=18490, help="nginx port on every address")
    parser.add_argument("--pairs", type=int, default=2, help="rounds of the two runs")
    parser.add_argument("--workers", type=int, default=2, help="nadird worker processes")
    parser.add_argument("--bags", type=int, default=16, help="bags per nadird worker")
    parser.add_argument("--per-domain", type=int, default=2, help="requests in flight per host")
    parser.add_argument("--workdir", default=None, help="where the stores go (default: /tmp)")
    args = parser.parse_args()
    args.keep = True  # the article runs' stores are read after the run, then removed here
    site = site_of(args)
    runs: list[Run] = []
    kinds_seen: Counter[str] = Counter()
    with (
        tempfile.TemporaryDirectory(prefix="bench-nginx-") as conf_dir,
        nginx(site, Path(conf_dir)) as server,
    ):
        expected, trees = expected_pages(site)
        print(json.dumps({**versions(), "expected_pages": len(expected), "trees": trees}))
        for pair in range(1, args.pairs + 1):
            for crawler in ("nadird", "nadird-article"):
                work = Path(tempfile.mkdtemp(prefix=f"bench-{crawler}-", dir=args.workdir))
                run = run_one(crawler, pair, args, site, server, expected, work)
                if crawler == "nadird-article":
                    kinds_seen += kinds(work)
                runs.append(run)
                print(json.dumps(run.to_dict()), flush=True)
                if run.correct:
                    shutil.rmtree(work, ignore_errors=True)
    summary = summarize(runs, kinds_seen)
    print(json.dumps(summary))
    return 0 if summary["all_runs_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
