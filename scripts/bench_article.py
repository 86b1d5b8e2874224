"""Benchmark: the CPU cost of `article: true` on a news-like page.

    python scripts/bench_article.py [--kb 150] [--repeat 200] [--parts]

The page is a news story as a large site serves it: a long article body
(headings, a list, a table, a figure, links), a navigation menu of a few
hundred links, a cookie banner, related stories, readers' comments, a
footer, JSON-LD and Open Graph, then promotion boxes and an inline script
(half each) bringing the HTML to about --kb kilobytes. It goes --repeat times through:

* `parse`: decoding and lxml (what every HTML page costs a worker);
* `fields`: the worker's item step for a job with three CSS fields;
* `article`: the item step for `article: true` (engine, dates, language,
  kind, text and markdown), and its parts: the engine alone, and the rest;
* `fingerprint`: the near-duplicate fingerprint of the article's text,
  which the worker takes after the item step.

Times are CPU time of this thread (time.thread_time) after one warm-up (the
language model loads on first use). The steps take turns, one run of each
per round, so a busy machine slows them alike; each gets its median and its
fastest run (the least disturbed by other processes). Prints one JSON
object, with the machine and versions, for docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from nadird.common.simhash import text_simhash
from nadird.items.processors import Context
from nadird.job.spec import Job, Selector
from nadird.worker.parse.article.engine import run_engine
from nadird.worker.parse.article.fields import article_fields
from nadird.worker.parse.item import extract_item
from nadird.worker.parse.parser import decode_html, parse_html

URL = "https://news.test/2026/03/14/harbour-tunnel-reopens"
_SENTENCES = [
    "The harbour tunnel carried its first cars in two years on Saturday morning.",
    "Engineers found that seawater had been seeping through joints in the lining for decades.",
    "The new lining uses a membrane that should keep water out for at least sixty years.",
    "Ferry operators expect their numbers to fall by half now that the road is open again.",
    "Shopkeepers near the southern portal hope through traffic brings customers back.",
    "The council kept the tolls suspended until the end of April as a thank-you to residents.",
]


def _paragraph(i: int) -> str:
    words = " ".join(_SENTENCES[(i + k) % len(_SENTENCES)] for k in range(4))
    return f"<p>{words} (Paragraph {i}, with <a href='/story/{i}'>a link</a>.)</p>"


def news_page(kb: int) -> bytes:
    """A news story of about `kb` kilobytes of HTML (see the module doc)."""
    nav = "".join(f"<li><a href='/section/{i}/'>Section {i}</a></li>" for i in range(300))
    body = []
    for i in range(40):
        if i % 8 == 4:
            body.append(f"<h2>Part {i // 8 + 1}</h2>")
        body.append(_paragraph(i))
    body.append("<ul>" + "".join(f"<li>Figure {i}: {i * 7} units</li>" for i in range(8)) + "</ul>")
    rows = "".join(f"<tr><td>{2020 + i}</td><td>{48_000 + i * 700}</td></tr>" for i in range(6))
    body.append(f"<table><tr><th>Year</th><th>Vehicles</th></tr>{rows}</table>")
    related = "".join(f"<li><a href='/r/{i}'>Related story number {i}</a></li>" for i in range(30))
    comments = "".join(
        f"<div class='comment'><p class='who'>reader{i}</p><p>{_SENTENCES[i % 6]}</p></div>"
        for i in range(60)
    )
    ld = json.dumps(
        {"@context": "https://schema.org", "@type": "NewsArticle",
         "headline": "Harbour tunnel reopens", "datePublished": "2026-03-14T09:30:00+01:00",
         "author": [{"@type": "Person", "name": "Mara Lindqvist"}]}
    )  # fmt: skip
    head = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<title>Harbour tunnel reopens | The Coastal Ledger</title>"
        "<meta property='og:type' content='article'>"
        f"<script type='application/ld+json'>{ld}</script>"
    )
    page = (
        f"{head}</head><body><div class='cookie-banner'><p>We use cookies.</p>"
        f"<button>Accept</button></div><header><nav><ul>{nav}</ul></nav></header>"
        f"<main><article><h1>Harbour tunnel reopens after two-year repair</h1>"
        f"{''.join(body)}</article><aside><h3>Related</h3><ul>{related}</ul></aside>"
        f"<section class='comments'>{comments}</section></main>"
        "<footer><p>© 2026 The Coastal Ledger</p></footer>"
    )
    # The rest as large sites fill it: half markup (promotion boxes, a
    # mega footer), half inline script (tracking, the app's state).
    pad = max(0, kb * 1024 - len(page.encode()) - 40)
    promos: list[str] = []
    i = 0
    while sum(map(len, promos)) < pad // 2:
        promos.append(
            f"<div class='promo'><a href='/promo/{i}'><img src='/i/{i}.jpg' alt=''>"
            f"<span>Promoted story {i} you may like</span></a></div>"
        )
        i += 1
    script = "var s=" + json.dumps("x" * max(0, pad - sum(map(len, promos)))) + ";"
    footer = f"<div class='mega-footer'>{''.join(promos)}</div>"
    return (page + f"{footer}<script>{script}</script></body></html>").encode()


def _cpu_times(steps: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Each step's CPU seconds per run, the steps taking turns."""
    for step in steps.values():
        step()  # warm-up: imports, caches, the language model
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(repeat):
        for name, step in steps.items():
            started = time.thread_time()
            step()
            times[name].append(time.thread_time() - started)
    return times


def measure(kb: int, repeat: int) -> dict[str, Any]:
    body = news_page(kb)
    text = decode_html(body)
    ctx = Context(URL, time.time())
    fields_job = Job(
        fields={
            "title": [Selector(css="h1")],
            "published": [Selector(css="time", attr="datetime")],
            "body": [Selector(css="article p", multiple=True)],
        }
    )
    article_job = Job(article=True)

    def parse() -> object:
        return parse_html(body, URL)

    def item(job: Job) -> Callable[[], object]:
        return lambda: extract_item(parse_html(body, URL), text, job, (), ctx)

    def engine() -> object:
        doc = parse_html(body, URL)
        assert doc is not None
        return run_engine(doc, URL)

    found = item(article_job)()
    assert isinstance(found, tuple)
    data = found[1]
    times = _cpu_times(
        {
            "parse": parse,
            "parse+fields": item(fields_job),
            "parse+article": item(article_job),
            "parse+engine": engine,
            "fingerprint": lambda: text_simhash(data["text"]),
        },
        repeat,
    )
    median = {name: statistics.median(runs) for name, runs in times.items()}
    fastest = {name: min(runs) for name, runs in times.items()}

    def ms(values: dict[str, float]) -> dict[str, float]:
        return {name: round(value * 1000, 2) for name, value in values.items()}

    return {
        "html_kb": round(len(body) / 1024, 1),
        "article_text_chars": len(data["text"] or ""),
        "kind": data["kind"],
        "cpu_ms_per_page": ms(median),
        "cpu_ms_per_page_fastest": ms(fastest),
        "article_ms_beyond_parse": round((median["parse+article"] - median["parse"]) * 1000, 2),
        # What a worker spends on the page for `article: true` beyond the
        # parse: the fields, then the near-duplicate fingerprint of the text.
        "worker_ms_beyond_parse": round(
            (median["parse+article"] - median["parse"] + median["fingerprint"]) * 1000, 2
        ),
    }


def parts(kb: int, repeat: int) -> dict[str, float]:
    """The article step's parts, each timed alone on one parsed page
    (median ms): where the time of `parse+article` goes."""
    from nadird.job.article import ArticleSpec
    from nadird.worker.parse.article import dates, kind, language, metadata, plain
    from nadird.worker.parse.article import engine as engine_parts
    from nadird.worker.parse.article.fields import _article_ld
    from nadird.worker.parse.article.focus import engine_page

    body = news_page(kb)
    doc = parse_html(body, URL)
    assert doc is not None
    content = run_engine(doc, URL)
    assert content is not None, "the engine found no text on the benchmark's page"
    given = engine_page(doc, images=False)
    ld, types = _article_ld(doc)
    text = plain.plain_text(content)
    steps: dict[str, Callable[[], object]] = {
        "engine's page (focus, copy)": lambda: engine_page(doc, images=False),
        "engine fast path on it": lambda: engine_parts._content(given, False, fast=True),
        "links resolved": lambda: engine_parts._resolve(content, URL),
        "metadata": lambda: metadata.page_metadata(doc),
        "JSON-LD": lambda: _article_ld(doc),
        "dates": lambda: dates.page_dates(doc, URL, ld),
        "link count": lambda: kind.is_link_list(doc),
        "kind": lambda: kind.page_kind(doc, types, content, dated=True),
        "plain text": lambda: plain.plain_text(content),
        "language": lambda: language.page_language(doc, text),
        "markdown": lambda: engine_parts.markdown_of(content),
        "fingerprint": lambda: text_simhash(text),
        "all the fields": lambda: article_fields(doc, len(body), URL, ArticleSpec()),
    }
    times = _cpu_times(steps, repeat)
    return {name: round(statistics.median(runs) * 1000, 2) for name, runs in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kb", type=int, default=150, help="HTML size of the page")
    parser.add_argument("--repeat", type=int, default=200, help="runs of each step")
    parser.add_argument("--parts", action="store_true", help="also time the article's parts")
    args = parser.parse_args()
    report = measure(args.kb, args.repeat)
    if args.parts:
        report["article_parts_ms"] = parts(args.kb, args.repeat)
    report.update(
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        machine=f"{os.cpu_count()} cores {platform.machine()}, {platform.system()} "
        f"{platform.release()}, load {os.getloadavg()[0]:.1f}",
        python=platform.python_version(),
        versions={p: version(p) for p in ("lxml", "trafilatura", "py3langid", "nadird")},
        repeat=args.repeat,
    )
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
