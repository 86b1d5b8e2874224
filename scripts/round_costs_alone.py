"""The three features of scripts/bench_round_costs.py on their own, each
called as nadird calls it, on real pages, in this process (CPU time of the
process: the article budget's timer runs in this thread, nothing else).

* article extraction: a worker's item step of a page (`extract_item` after
  `parse_html`, as worker/pages.py runs it) for the crawl's job (the
  <title> as a field) and for that job with `article: true`, taking turns
  page by page; what `article: true` adds is the difference.
* feed parsing: `read_feed_page` (worker/feed_page.py: unzip, sniff, read,
  canonical entries through the job's link rules) on each feed document.
* WARC writing: `Archive.add` on results messages of 32 pages, the records
  a page gets as the master writes them (request and response), bodies
  plain as nginx sends the crawl's pages (scripts/bench_warc.py).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_real_run import Site
from bench_warc import master_side, sample_pages
from round_costs_feeds import Document

from nadird.config import FetchConfig
from nadird.items.processors import Context
from nadird.job.feeds import FeedsSpec
from nadird.job.spec import Job, Selector
from nadird.worker.feed_page import read_feed_page
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.parse.item import extract_item
from nadird.worker.parse.parser import decode_html, parse_html

TITLE_JOB = Job(fields={"title": [Selector(css="title")]})
ARTICLE_JOB = Job(fields={"title": [Selector(css="title")]}, article=True)


def _item_step(url: str, html: bytes, job: Job) -> None:
    doc = parse_html(html, url)
    if doc is not None:
        extract_item(doc, decode_html(html), job, (), Context(url, time.time()))


def _cpu(step: Callable[[], object]) -> float:
    started = time.process_time()
    step()
    return time.process_time() - started


def article_alone(pages: list[tuple[str, bytes]]) -> dict[str, Any]:
    """Pages per CPU-second of `article: true` alone, and of the item step
    with and without it (medians would hide the long pages: sums)."""
    for url, html in pages[:2]:  # warm-up: imports, the language model
        _item_step(url, html, ARTICLE_JOB)
    plain = article = 0.0
    for url, html in pages:
        plain += _cpu(lambda: _item_step(url, html, TITLE_JOB))  # noqa: B023
        article += _cpu(lambda: _item_step(url, html, ARTICLE_JOB))  # noqa: B023
    count = len(pages)
    return {
        "pages": count,
        "kb_per_page": round(sum(len(h) for _, h in pages) / count / 1024, 1),
        "parse_and_title_pages_per_cpu_s": round(count / plain, 1),
        "with_article_pages_per_cpu_s": round(count / article, 1),
        "article_ms_per_page": round((article - plain) / count * 1000, 2),
        "pages_per_cpu_s": round(count / (article - plain), 1),
    }


def feeds_alone(docs: list[Document], base: str, repeat: int) -> list[dict[str, Any]]:
    """Documents and entries per CPU-second of reading each document (served
    under `base`, the origin of its entries)."""
    job = Job(feeds=True, fields={"title": [Selector(css="title")]})
    spec = job.feeds if isinstance(job.feeds, FeedsSpec) else FeedsSpec()
    fetch = FetchConfig()
    links = LinkPipeline(job, fetch, DomainCounts())
    rows = []
    for doc in docs:
        url = f"{base}/{doc.path}"
        read = read_feed_page(url, doc.body, spec, links, fetch.sitemaps.max_bytes)
        if read.error is not None or len(read.links) != doc.entries:
            raise SystemExit(f"{doc.path}: read {len(read.links)} entries, error {read.error}")
        cpu = _cpu(lambda: [
            read_feed_page(url, doc.body, spec, links, fetch.sitemaps.max_bytes)  # noqa: B023
            for _ in range(repeat)
        ])  # fmt: skip
        rows.append({
            "form": doc.form, "entries": doc.entries, "kb": round(len(doc.body) / 1024, 1),
            "docs_per_cpu_s": round(repeat / cpu, 1),
            "entries_per_cpu_s": round(repeat * doc.entries / cpu),
        })  # fmt: skip
    return rows


def warc_alone(site: Site, pages: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-costs-warc-") as work:
        found = master_side(site, Path(work), pages, 32, encoded=False)
    found["pages_per_cpu_s"] = round(1e6 / found["cpu_us_per_page"], 1)
    return found


def tree_pages(site: Site, count: int) -> list[tuple[str, bytes]]:
    """`count` HTML pages of the site's trees, at random (a fixed seed)."""
    return sample_pages(site, count)
