"""What article extraction, feed parsing and WARC writing cost, each on its
own and inside a crawl, in one table.

    python scripts/bench_round_costs.py            # the full run (~12 min on 2 busy cores)
    python scripts/bench_round_costs.py --quick    # fewer pages on their own
    python scripts/bench_round_costs.py --only article --profile /tmp/prof

On its own (scripts/round_costs_alone.py): pages (feed documents) per CPU
second of each feature called as nadird calls it, in this process, on real
pages: Debian's Python documentation (the crawl's pages) and, for articles,
the 44 real news and blog pages of scripts/bench_article_quality.py too
(when its cache is there); feeds of 50 to 500 entries in each form (RSS 2.0,
Atom, JSON Feed, Google News sitemap), their entries that documentation's
pages (scripts/round_costs_feeds.py).

Inside a crawl (scripts/round_costs_crawl.py): `nadird crawl` of the same
pages twice in a row, the feature off then on: nginx serves the Python
documentation (528 pages) for `article: true` and `--warc`, and the same
tree with the feeds beside it, announced and linked from its index, for
`feeds:` (hubs revisited hourly, so that the run fetches each page once; it
is stopped by SIGINT once every page is stored, the run without feeds
alike when it has not ended first). Every run is checked as
scripts/bench_real_site.py checks its own: each page of an offline walk
stored once, requested once. Per run: CPU of the master and of the workers;
per feature: pages per CPU-second off and on, and the share of the "on"
run's CPU the feature took, in all and per process.

Prints JSON lines, then the table (markdown) for docs/BENCHMARKS.md. With
--profile DIR, one more "on" run of the feature with the largest share (or
--profile-feature) under py-spy: the top own-time frames of the workers and
of the master. Needs the `bench` extra, nginx and python3.11-doc.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from article_eval_data import load_cases
from bench_real_run import Server, Site, check, nadird_crawl_line, nginx, records
from bench_real_site import TREES, expected_pages, median
from pyspy_top import top_functions
from round_costs_alone import article_alone, feeds_alone, tree_pages, warc_alone
from round_costs_crawl import run_crawl
from round_costs_feeds import build_site, documents

FEATURES = ("article", "feeds", "warc")
EVAL_CACHE = Path.home() / ".cache" / "nadird-article-eval"
PARTS = ("total", "master", "workers")  # a crawl's CPU: in all, and per process
Pair = tuple[dict[str, Any], dict[str, Any]]  # one feature's runs, off and on


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer pages on their own")
    parser.add_argument("--only", default=",".join(FEATURES), help="of article,feeds,warc")
    parser.add_argument("--no-crawl", action="store_true", help="only the features on their own")
    parser.add_argument("--pairs", type=int, default=1, help="runs off and on per feature")
    parser.add_argument("--port", type=int, default=18560, help="nginx port on every address")
    parser.add_argument("--workers", type=int, default=2, help="nadird worker processes")
    parser.add_argument("--bags", type=int, default=16, help="bags per worker")
    parser.add_argument("--per-domain", type=int, default=2, help="requests in flight per host")
    parser.add_argument("--feed-sizes", default="50,100,200,500", help="entries per feed")
    parser.add_argument("--workdir", default=None, help="where the runs go (default: /tmp)")
    parser.add_argument("--profile", default=None, help="a directory: profile one run")
    parser.add_argument(
        "--profile-feature", choices=FEATURES, default=None, help="default: the largest share"
    )
    args = parser.parse_args()
    args.features = [f for f in args.only.split(",") if f]
    if unknown := set(args.features) - set(FEATURES):
        parser.error(f"--only: unknown {sorted(unknown)}, choose from {','.join(FEATURES)}")
    try:
        args.sizes = [int(n) for n in args.feed_sizes.split(",")]
    except ValueError:
        parser.error(f"--feed-sizes: numbers of entries with commas, got {args.feed_sizes!r}")
    if not args.sizes or min(args.sizes) < 1:
        parser.error(f"--feed-sizes: each at least 1, got {args.feed_sizes!r}")
    return args


# ------------------------------------------------------------ on its own


def alone(args: argparse.Namespace, docs_site: Site, feed_base: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "article" in args.features:
        out["article"] = {
            "doc_pages": article_alone(tree_pages(docs_site, 30 if args.quick else 120))
        }
        if EVAL_CACHE.is_dir():
            cases = load_cases(EVAL_CACHE)
            out["article"]["news_pages"] = article_alone([(c.name, c.html) for c in cases])
    if "feeds" in args.features:
        docs = documents(next(iter(docs_site.roots.values())), feed_base, args.sizes)
        out["feeds"] = feeds_alone(docs, feed_base, 5 if args.quick else 20)
    if "warc" in args.features:
        out["warc"] = warc_alone(docs_site, 200 if args.quick else 1000)
    return out


# ------------------------------------------------------------ in a crawl


def config_of(args: argparse.Namespace, feature: str, on: bool, work: Path) -> dict[str, Any]:
    """The crawl's config (scripts/bench_warc.py's job), the feature on or off."""
    job: dict[str, Any] = {"robots": False, "fields": {"title": [{"css": "title"}]}}
    config: dict[str, Any] = {
        "log_level": "warning",
        "jobs": {"default": job},
        "worker": {"bags": args.bags},
        "fetch": {"throttle": {"adaptive": False}},
    }
    if on and feature == "article":
        job["article"] = True
    if on and feature == "feeds":
        job["feeds"] = {"revisit": {"every": "1h"}}  # each page fetched once in the run
    if on and feature == "warc":
        config["warc"] = {"dir": str(work / "warc"), "gzip_level": 6}
    return config


def command_of(
    args: argparse.Namespace, site: Site, feature: str, on: bool, work: Path
) -> list[str]:
    line = nadird_crawl_line(args, site, work, config_of(args, feature, on, work))
    return line + (["--warc", str(work / "warc")] if on and feature == "warc" else [])


def crawl_once(
    args: argparse.Namespace, site: Site, server: Server, feature: str, on: bool
) -> dict[str, Any]:
    expected, _ = expected_pages(site)
    work = Path(tempfile.mkdtemp(prefix=f"bench-costs-{feature}-", dir=args.workdir))
    offset, load = server.log_size(), os.getloadavg()[0]
    stop_at = len(expected) if feature == "feeds" else None
    cpu = run_crawl(command_of(args, site, feature, on, work), work, stop_at)
    time.sleep(0.2)  # nginx writes its log line after the response
    found = records("nadird", work)
    problems = check(found, expected, server.requests_since(offset))
    if problems:
        print(f"  {feature} {on}: {problems} (files kept in {work})", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return {"feature": feature, "on": on, "pages": len(found), **vars(cpu),
            "pages_per_cpu_s": round(len(found) / cpu.total, 1), "load_1min": round(load, 2),
            "correct": not problems}  # fmt: skip


def shares(off: dict[str, Any], on: dict[str, Any]) -> dict[str, float]:
    """The feature's share of the "on" run's CPU: in all, master's, workers'."""
    return {part: round((on[part] - off[part]) / on["total"], 3) for part in PARTS}


def added_ms(off: dict[str, Any], on: dict[str, Any]) -> dict[str, float]:
    """CPU milliseconds per page the feature added, in all and per process."""
    return {part: round((on[part] - off[part]) / on["pages"] * 1000, 2) for part in PARTS}


# ------------------------------------------------------------ the table


def _alone_cell(feature: str, found: Any) -> str:
    """`found`: the feature's own benchmark's figures (feeds: one row per feed size)."""
    if feature == "article":
        parts = [f"{found['doc_pages']['pages_per_cpu_s']} doc pages "
                 f"({found['doc_pages']['article_ms_per_page']} ms each)"]  # fmt: skip
        if "news_pages" in found:
            news = found["news_pages"]
            parts.append(f"{news['pages_per_cpu_s']} news pages ({news['article_ms_per_page']} ms)")
        return "; ".join(parts)
    if feature == "feeds":
        per: dict[int, list[float]] = {}
        for row in found:
            per.setdefault(row["entries"], []).append(row["docs_per_cpu_s"])
        return "; ".join(f"{n} entries: {min(v):.0f}-{max(v):.0f} docs" for n, v in per.items())
    return f"{found['pages_per_cpu_s']} pages ({found['cpu_us_per_page']} µs each)"


def _crawl_cells(found: list[Pair]) -> list[str]:
    """Pages per CPU-second off and on, the shares (medians; each pair's
    share beside it when there are several)."""
    each = [shares(off, on) for off, on in found]
    cells = [
        f"{median([off['pages_per_cpu_s'] for off, _ in found]):.1f}",
        f"{median([on['pages_per_cpu_s'] for _, on in found]):.1f}",
    ]
    for part in PARTS:
        cell = f"{median([s[part] for s in each]):.1%}"
        if len(each) > 1:
            cell += " (" + ", ".join(f"{s[part]:.1%}" for s in each) + ")"
        cells.append(cell)
    added = [added_ms(off, on) for off, on in found]
    cells.append(" / ".join(f"{median([a[p] for a in added]):.1f}" for p in ("master", "workers")))
    return cells


def table(alone_found: dict[str, Any], pairs: dict[str, list[Pair]]) -> str:
    lines = [
        "| feature | on its own, per CPU-second | crawl off: pages/CPU-s | on | "
        "share of the crawl's CPU: all | master | workers | added ms per page: master / workers |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for feature in FEATURES:
        if feature not in alone_found and feature not in pairs:
            continue
        cell = _alone_cell(feature, alone_found[feature]) if feature in alone_found else "-"
        crawl = _crawl_cells(pairs[feature]) if feature in pairs else ["-"] * 6
        lines.append(f"| {feature} | {cell} | {' | '.join(crawl)} |")
    return "\n".join(lines)


# ------------------------------------------------------------ a profile


def _in_worker(stack: str) -> bool:
    """Whether a py-spy stack (--subprocesses: the parents' process frames
    first) was sampled in a worker."""
    return any(f.startswith("process ") and "--role worker" in f for f in stack.split(";"))


def profile(args: argparse.Namespace, site: Site, feature: str) -> None:
    """One "on" run under py-spy; the top own-time frames per process kind."""
    out = Path(args.profile)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"bench-costs-prof-{feature}-", dir=args.workdir))
    raw = out / f"{feature}.txt"
    spy = ["py-spy", "record", "--subprocesses", "--format", "raw", "--rate", "100",
           "--nonblocking", "--function", "-o", str(raw), "--"]  # fmt: skip
    command = command_of(args, site, feature, True, work)
    if feature == "feeds":  # it never ends by itself; py-spy would take a SIGINT for itself
        command += ["--for", "90s"]
    run_crawl(spy + command, work)
    lines = raw.read_text(encoding="utf-8", errors="replace").splitlines()
    for role, mark in (("workers", True), ("master", False)):
        part = out / f"{feature}-{role}.txt"
        part.write_text("\n".join(x for x in lines if _in_worker(x) == mark), encoding="utf-8")
        print(f"== {feature}, {role}: top own time ({part})")
        for row in top_functions(part, 20):
            print(row)
    print(f"(the run and py-spy's output: {work})")


# ------------------------------------------------------------ the run


def header(args: argparse.Namespace) -> dict[str, Any]:
    packages = ("nadird", "lxml", "trafilatura", "fastfeedparser", "warcio", "aiohttp")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "machine": f"{os.cpu_count()} cores {platform.machine()}, {platform.system()} "
        f"{platform.release()}",
        "python": platform.python_version(),
        "versions": {p: version(p) for p in packages},
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
        "args": {k: v for k, v in vars(args).items() if k != "features"},
    }


def sites(args: argparse.Namespace, feed_dir: Path) -> tuple[Site, Site, Site]:
    """(the doc tree's site, the feed site, both as nginx serves them)."""
    docs_root = Path(TREES["python"][0])
    if not docs_root.is_dir():
        raise SystemExit(f"{docs_root} is missing: install python3.11-doc")
    docs_origin, feed_origin = f"127.0.0.2:{args.port}", f"127.0.0.3:{args.port}"
    build_site(docs_root, feed_dir, f"http://{feed_origin}", args.sizes)
    docs = Site({docs_origin: docs_root}, [f"http://{docs_origin}/index.html"])
    feeds = Site({feed_origin: feed_dir}, [f"http://{feed_origin}/index.html"])
    return docs, feeds, Site({**docs.roots, **feeds.roots}, docs.seeds + feeds.seeds)


def main() -> int:
    args = _args()
    print(json.dumps(header(args)), flush=True)
    pairs: dict[str, list[Pair]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-costs-") as tmp:
        os.chmod(tmp, 0o755)  # nginx's workers read the feed site as another user
        docs_site, feed_site, both = sites(args, Path(tmp) / "feedsite")
        feed_base = next(iter(feed_site.seeds)).rsplit("/", 1)[0]
        alone_found = alone(args, docs_site, feed_base)
        print(json.dumps({"alone": alone_found}), flush=True)
        if not args.no_crawl or args.profile:
            with nginx(both, Path(tmp)) as server:
                for feature in [] if args.no_crawl else args.features:
                    site = feed_site if feature == "feeds" else docs_site
                    pairs[feature] = []
                    for _ in range(args.pairs):  # one feature's runs in a row: the same load
                        off = crawl_once(args, site, server, feature, False)
                        print(json.dumps(off), flush=True)
                        on = crawl_once(args, site, server, feature, True)
                        found = {**on, "share": shares(off, on), "added_ms": added_ms(off, on)}
                        print(json.dumps(found), flush=True)
                        pairs[feature].append((off, on))
                if args.profile:
                    chosen = args.profile_feature or max(
                        pairs, key=lambda f: shares(*pairs[f][0])["total"], default="article"
                    )
                    profile(args, feed_site if chosen == "feeds" else docs_site, chosen)
    correct = all(run["correct"] for found in pairs.values() for pair in found for run in pair)
    print(json.dumps({"all_runs_correct": correct,
                      "load_at_end": [round(x, 2) for x in os.getloadavg()]}))  # fmt: skip
    print(table(alone_found, pairs))
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
