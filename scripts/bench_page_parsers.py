"""A worker's CPU per page, lxml against Lexbor, on real pages, in one process.

`PageProcessor._from_outcome` (decoding, parsing, directives, the fields,
the link walk, resolving and canonicalizing, the result) runs on pages read
from disk, as if fetched, for the same job with `parser: lxml` and with
`parser: auto` (Lexbor). No network, no master: what the parser choice
changes, without the noise of a whole crawl. Needs the doc packages the
real-site benchmark serves (scripts/bench-deps.sh).

    python scripts/bench_page_parsers.py --trees doxygen --pages 400
    python scripts/bench_page_parsers.py --trees debian --pages 400
    # the code of another tree (before the parser choice): lxml only
    PYTHONPATH=/tmp/base python scripts/bench_page_parsers.py --trees doxygen
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from bench_real_site import TREE_SETS, TREES

from nadird.common.urls import fingerprint
from nadird.config import FetchConfig
from nadird.job.spec import Job, Selector
from nadird.worker.fetch.fetcher import Fetcher, FetchOutcome
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask

try:
    from nadird.job.parser_choice import page_parser
except ImportError:  # code from before the choice: every page through lxml
    page_parser = None  # type: ignore[assignment]


def pages_of(trees: str, count: int, seed: int) -> list[tuple[str, bytes]]:
    """(url, body) of `count` random HTML pages of the trees, one host each."""
    found: list[tuple[str, Path]] = []
    for i, name in enumerate(TREE_SETS.get(trees, trees).split(",")):
        root = Path(TREES[name][0])
        origin = f"http://127.0.0.{i + 2}"
        found += [(f"{origin}/{p.relative_to(root)}", p) for p in root.rglob("*.html")]
    picked = random.Random(seed).sample(found, min(count, len(found)))
    return [(url, path.read_bytes()) for url, path in picked]


def cpu_per_page(parser: str, pages: list[tuple[str, bytes]], rounds: int) -> tuple[float, str]:
    """(best ms of CPU a page over the rounds, the parser the job got)."""
    choice = {} if page_parser is None else {"parser": parser}
    job = Job(robots=False, fields={"title": [Selector(css="title")]}, **choice)  # type: ignore[arg-type]
    fetch = FetchConfig(store_body_bytes=0)
    processor = PageProcessor(Fetcher(fetch), job, fetch, LinkPipeline(job, fetch, DomainCounts()))
    outcomes = [FetchOutcome(200, url, "text/html", None, body) for url, body in pages]
    tasks = [PageTask(url, fingerprint(url), 0) for url, _ in pages]
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for task, outcome in zip(tasks, outcomes, strict=True):
            processor._from_outcome(task, outcome, 0.0, len(outcome.body))
        best = min(best, time.process_time() - started)
    chosen = "lxml (the code before)" if page_parser is None else page_parser(job)
    return best / len(pages) * 1000, chosen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--trees", default="doxygen", help="a tree set or names, as bench_real_site")
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    pages = pages_of(args.trees, args.pages, args.seed)
    kib = sum(len(body) for _, body in pages) / len(pages) / 1024
    for parser in ("lxml", "auto") if page_parser is not None else ("lxml",):
        ms, chosen = cpu_per_page(parser, pages, args.rounds)
        line = {"trees": args.trees, "pages": len(pages), "kib_per_page": round(kib, 1)}
        print(json.dumps({**line, "parser": chosen, "cpu_ms_per_page": round(ms, 3)}))


if __name__ == "__main__":
    main()
