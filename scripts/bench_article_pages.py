"""Benchmark: the CPU cost of the article extraction on real pages, page by page.

    python scripts/bench_article_pages.py [--cache DIR] [--repeat 5] [--pages]
    python scripts/bench_article_pages.py --dir /usr/share/doc/python3.11/html --limit 60

The pages are those of scripts/bench_article_quality.py (the full-text and
the snippet sets, ~130 real pages of ~120 sites, fetched once into --cache).
Each page is parsed once, then goes --repeat times through the engine alone
(`run_engine`: the content tree the fields are made of) and through the
whole article step (`article_fields`: engine, metadata, dates, language,
kind, text, markdown), the two taking turns. With --dir, the pages are
instead the first --limit HTML files under that directory (sorted by path:
a documentation tree, say), with their file URL. A page's time is its median
run, in CPU time of this thread (time.thread_time). Prints one JSON object:
the median and mean over the pages, and over the pages of more than 100 KB
of HTML, for docs/BENCHMARKS.md; --pages adds every page's times.

Only functions both old and new code have are called, so the code before
a change is measured with the same script: `PYTHONPATH=/path/to/checkout`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from article_eval_data import load_cases
from article_eval_snippets import load_snippet_cases

import nadird
from nadird.job.article import ArticleSpec
from nadird.worker.parse.article.engine import run_engine
from nadird.worker.parse.article.fields import article_fields
from nadird.worker.parse.parser import parse_html

URL = "https://eval.test/page"
LARGE_BYTES = 100 * 1024


def _timed(step: Callable[[], object], runs: list[float]) -> None:
    started = time.thread_time()
    step()
    runs.append(time.thread_time() - started)


def page_times(html: bytes, url: str, repeat: int) -> dict[str, float]:
    """The page's median ms for the engine alone and the whole article step."""
    doc = parse_html(html, url)
    assert doc is not None
    steps: dict[str, Callable[[], object]] = {
        "engine": lambda: run_engine(doc, url),
        "article": lambda: article_fields(doc, len(html), url, ArticleSpec()),
    }
    runs: dict[str, list[float]] = {name: [] for name in steps}
    for step in steps.values():
        step()  # warm-up: this page's first run
    for _ in range(repeat):
        for name, step in steps.items():
            _timed(step, runs[name])
    return {name: round(statistics.median(times) * 1000, 2) for name, times in runs.items()}


def _summary(rows: list[dict[str, float]]) -> dict[str, Any]:
    return {
        "pages": len(rows),
        **{
            f"{step}_ms_{how}": round(summarize(row[step] for row in rows), 2)
            for step in ("engine", "article")
            for how, summarize in (("median", statistics.median), ("mean", statistics.mean))
        },
    }


def _eval_pages(cache: Path) -> list[tuple[str, bytes, str]]:
    """The pages of the quality sets: (name, HTML, URL)."""
    cases = load_cases(cache)
    known = {hashlib.sha256(case.html).digest() for case in cases}
    pages = [(case.name, case.html, URL) for case in cases]
    return pages + [(c.name, c.html, c.url) for c in load_snippet_cases(cache, known)]


def _files(root: Path, limit: int) -> list[tuple[str, bytes, str]]:
    files = sorted(root.rglob("*.html"))[:limit]
    return [(str(f.relative_to(root)), f.read_bytes(), f.as_uri()) for f in files]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/nadird-article-eval")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each step per page")
    parser.add_argument("--pages", action="store_true", help="list every page's times")
    parser.add_argument("--dir", type=Path, help="time the HTML files under DIR instead")
    parser.add_argument("--limit", type=int, default=60, help="files taken from --dir")
    args = parser.parse_args()
    pages = _files(args.dir, args.limit) if args.dir else _eval_pages(args.cache)
    # The engine's imports and the language model, outside any page's time.
    article_fields(parse_html(pages[0][1], URL), len(pages[0][1]), URL, ArticleSpec())
    times = {name: page_times(html, url, args.repeat) for name, html, url in pages}
    large = {name for name, html, _ in pages if len(html) > LARGE_BYTES}
    report: dict[str, Any] = {
        "all": _summary(list(times.values())),
        "over_100_kb": _summary([row for name, row in times.items() if name in large]),
        "code": str(Path(nadird.__file__).parent),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{os.cpu_count()} cores {platform.machine()}, load {os.getloadavg()[0]:.1f}",
        "versions": {p: version(p) for p in ("lxml", "trafilatura", "py3langid")},
        "repeat": args.repeat,
    }
    if args.pages:
        report["pages"] = times
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
