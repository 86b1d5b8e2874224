"""End to end on real HTML: nadird, Scrapy and Crawlee crawl Debian doc trees.

nginx (in the foreground, config, pid, logs and temp paths in a temp dir)
serves each doc tree as a host of its own: tree N at 127.0.0.(N+2):PORT, so
every tree is its own domain for nadird (an IP address is its own registrable
domain; loopback needs `--allow-private`) and no crawler needs a resolver.
The crawlers run alternated, nadird, Scrapy, Crawlee, `--pairs` times, doing
the same job: seeds = each tree's index page; follow same-host <a href> links;
extract the <title> of HTML pages; one record per URL (404 pages included);
robots.txt off; no delay; `--per-domain` requests in flight per host (Crawlee
has no per-host limit: it gets per-domain x hosts in flight overall).

Checked on every run, the run fails otherwise: the crawler's records are
exactly the pages an offline walk of the trees reaches (scripts/real_site_walk.py),
one record each, and nginx's access log has each of them requested exactly
once and nothing else.

Measured per run: wall time, CPU of the crawler's whole process tree
(os.wait4 on its top process), pages/s, pages/CPU-s, peak RSS of each process
(psutil, sampled every 0.2 s: nadird's master is the top process, its workers
the children), nginx's CPU apart. Prints JSON lines: a header, one line per
run, a summary with the ratios of nadird to Scrapy and to Crawlee.

    python scripts/bench_real_site.py --pairs 2
    python scripts/bench_real_site.py --trees python,postgresql,django --pairs 1
    python scripts/bench_real_site.py --trees doxygen --pairs 1   # link-heavy pages
    python scripts/bench_real_site.py --profile DIR   # nadird under py-spy, untimed
    # before/after pairs of nadird alone: the code of main against this tree's
    mkdir /tmp/base && git archive main nadird | tar -x -C /tmp/base
    python scripts/bench_real_site.py --crawlers nadird-baseline,nadird --baseline /tmp/base

Needs the `bench` extra (Scrapy, Crawlee, psutil, py-spy), nginx at
/usr/sbin/nginx and the doc packages of TREES (openjdk-17-doc,
python3.11-doc, postgresql-doc-15, python-django-doc; for "doxygen":
wx3.2-doc, libgtkmm-3.0-doc, libglibmm-2.4-doc).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_real_run import Run, Site, nginx, profile, run_one
from real_site_walk import walk

# name -> (directory served as the host's root, seed path)
TREES = {
    "javadoc": ("/usr/share/doc/openjdk-17-doc/api", "/index.html"),
    "python": ("/usr/share/doc/python3.11/html", "/index.html"),
    "postgresql": ("/usr/share/doc/postgresql-doc-15/html", "/index.html"),
    "django": ("/usr/share/doc/python-django-doc/html", "/index.html"),
    # Doxygen API references: 100+ same-host links a page (member lists, class trees)
    "wx": ("/usr/share/doc/wx3.2-doc/html", "/index.html"),
    "gtkmm": ("/usr/share/doc/libgtkmm-3.0-doc/reference/html", "/index.html"),
    "glibmm": ("/usr/share/doc/libglibmm-2.4-doc/reference/html", "/index.html"),
}
# --trees accepts these names for their lists too
TREE_SETS = {
    "debian": "javadoc,python,postgresql,django",
    "doxygen": "wx,gtkmm,glibmm",
}
CRAWLERS = ("nadird", "scrapy", "crawlee")
OPTIONAL = ("nadird-baseline",)  # with --baseline: nadird's code from another tree


def site_of(args: argparse.Namespace) -> Site:
    names = TREE_SETS.get(args.trees, args.trees).split(",")
    unknown = [n for n in names if n not in TREES]
    if unknown:
        raise SystemExit(
            f"unknown tree(s) {unknown}; choose from {sorted(TREES)} or a set {sorted(TREE_SETS)}"
        )
    roots = {f"127.0.0.{i + 2}:{args.port}": Path(TREES[n][0]) for i, n in enumerate(names)}
    seeds = [f"http://{origin}{TREES[n][1]}" for origin, n in zip(roots, names, strict=True)]
    for root in roots.values():
        if not root.is_dir():
            raise SystemExit(f"{root} is missing: install its Debian doc package")
    return Site(roots=roots, seeds=seeds)


def expected_pages(site: Site) -> tuple[dict[str, int], dict[str, Any]]:
    """key -> status of every page the walk reaches, and what the walk saw."""
    status: dict[str, int] = {}
    seen: dict[str, Any] = {}
    for (origin, root), seed in zip(site.roots.items(), site.seeds, strict=True):
        tree = walk(root, origin, seed.split(origin, 1)[1])
        if tree.redirects:
            raise SystemExit(f"{root}: directory links without '/': {sorted(tree.redirects)[:3]}")
        status.update(tree.status)
        seen[origin] = {
            "root": str(root),
            "pages": len(tree.status),
            "not_found": tree.count(404),
            "links_per_parsed_page": round(tree.links_seen / max(1, tree.count(200)), 1),
            "area_links": tree.area_links,
        }
    return status, seen


def versions() -> dict[str, Any]:
    import aiohttp
    import crawlee
    import lxml.etree
    import psutil
    import scrapy

    from nadird import __version__

    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": sys.version.split()[0],
        "nadird": __version__,
        "scrapy": scrapy.__version__,
        "crawlee": getattr(crawlee, "__version__", "?"),
        "aiohttp": aiohttp.__version__,
        "lxml": ".".join(map(str, lxml.etree.LXML_VERSION)),
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def summarize(runs: list[Run]) -> dict[str, Any]:
    out: dict[str, Any] = {"all_runs_correct": all(r.correct for r in runs)}
    nadird = {r.pair: r for r in runs if r.crawler == "nadird"}
    for peer in ("scrapy", "crawlee", "nadird-baseline"):
        speed, per_cpu = [], []
        for r in runs:
            if r.crawler == peer and r.pair in nadird:
                speed.append(nadird[r.pair].pages_per_s / r.pages_per_s)
                per_cpu.append(nadird[r.pair].pages_per_cpu_s / r.pages_per_cpu_s)
        if speed:
            out[f"vs_{peer}"] = {
                "pages_per_s_ratios": [round(x, 2) for x in speed],
                "pages_per_cpu_s_ratios": [round(x, 2) for x in per_cpu],
                "median_pages_per_s_ratio": round(median(speed), 2),
                "median_pages_per_cpu_s_ratio": round(median(per_cpu), 2),
            }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--trees", default="debian", help=f"comma-separated TREES, or one of {sorted(TREE_SETS)}"
    )
    parser.add_argument("--port", type=int, default=18480, help="nginx port on every address")
    parser.add_argument("--pairs", type=int, default=2, help="rounds of the crawlers, alternated")
    parser.add_argument("--crawlers", default=",".join(CRAWLERS), help="which, in this order")
    parser.add_argument("--workers", type=int, default=2, help="nadird worker processes")
    parser.add_argument("--bags", type=int, default=16, help="bags per nadird worker")
    parser.add_argument("--per-domain", type=int, default=2, help="requests in flight per host")
    parser.add_argument("--workdir", default=None, help="where the stores go (default: /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep each run's files")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="a directory holding another nadird package (e.g. `git archive main nadird`); "
        "crawler nadird-baseline runs it through PYTHONPATH, for before/after pairs",
    )
    parser.add_argument("--profile", metavar="DIR", help="one nadird run under py-spy, untimed")
    parser.add_argument("--top", type=int, default=30, help="functions listed per profile")
    args = parser.parse_args()
    crawlers = args.crawlers.split(",")
    if args.pairs < 1 or not set(crawlers) <= set(CRAWLERS + OPTIONAL):
        parser.error(f"--pairs must be >= 1 and --crawlers a subset of {CRAWLERS + OPTIONAL}")
    if "nadird-baseline" in crawlers and not (args.baseline and Path(args.baseline).is_dir()):
        parser.error("crawler nadird-baseline needs --baseline DIR")
    site = site_of(args)
    with (
        tempfile.TemporaryDirectory(prefix="bench-nginx-") as conf_dir,
        nginx(site, Path(conf_dir)) as server,
    ):
        if args.profile:
            profile(args, site, server)
            return 0
        expected, trees = expected_pages(site)
        header = {**versions(), "expected_pages": len(expected), "trees": trees, "args": vars(args)}
        print(json.dumps(header), flush=True)
        runs: list[Run] = []
        for pair in range(1, args.pairs + 1):
            for crawler in crawlers:
                work = Path(tempfile.mkdtemp(prefix=f"bench-{crawler}-", dir=args.workdir))
                run = run_one(crawler, pair, args, site, server, expected, work)
                runs.append(run)
                print(json.dumps(run.to_dict()), flush=True)
        summary = summarize(runs)
        print(json.dumps({**summary, "load_at_end": [round(x, 2) for x in os.getloadavg()]}))
        return 0 if summary["all_runs_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
