"""Benchmark: language detection for `article: true`, py3langid against lingua.

    python scripts/bench_language.py [--cache DIR]

The texts are the reference main texts of scripts/bench_article_quality.py's
pages and the other article texts of the same packages (scripts/
article_eval_data.py), labelled by the language their package names them
for: 14 languages, Chinese, Japanese and Korean among them. Each text is cut
to its first 30, 100, 300, 1,000 (the sample the article fields detect on)
and 5,000 characters, and each detector says its language:
accuracy per length and for Chinese, Japanese and Korean apart, the CPU
time per text, the model's load time and the memory it adds.

lingua (lingua-language-detector) is not a dependency: install it to run
this (`pip install lingua-language-detector`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from article_eval_data import labelled_texts
from bench_common import rss_mb

LENGTHS = (30, 100, 300, 1000, 5000)
CJK = {"zh", "ja", "ko"}


def load_py3langid() -> Callable[[str], str | None]:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return lambda text: str(identifier.classify(text)[0])


def load_lingua() -> Callable[[str], str | None]:
    from lingua import LanguageDetectorBuilder

    detector = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()

    def detect(text: str) -> str | None:
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found is not None else None

    return detect


def judge(
    name: str, load: Callable[[], Callable[[str], str | None]], texts: list[Any]
) -> dict[str, Any]:
    rss, started = rss_mb(), time.process_time()
    detect = load()
    report: dict[str, Any] = {
        "load_cpu_s": round(time.process_time() - started, 2),
        "memory_mb": round(rss_mb() - rss, 1),
    }
    for length in LENGTHS:
        right = right_cjk = cjk = 0
        cpu = 0.0
        for _, language, text in texts:
            sample = " ".join(text.split())[:length]
            started = time.thread_time()
            found = detect(sample)
            cpu += time.thread_time() - started
            right += found == language
            if language in CJK:
                cjk += 1
                right_cjk += found == language
        report[f"{length} chars"] = {
            "accuracy": round(right / len(texts), 3),
            "accuracy_cjk": round(right_cjk / cjk, 3),
            "cpu_ms_per_text": round(cpu / len(texts) * 1000, 2),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/nadird-article-eval")
    args = parser.parse_args()
    texts = labelled_texts(args.cache)
    languages = sorted({language for _, language, _ in texts})
    report: dict[str, Any] = {
        "texts": len(texts),
        "languages": languages,
        "cjk_texts": sum(language in CJK for _, language, _ in texts),
        "py3langid": judge("py3langid", load_py3langid, texts),
        "lingua": judge("lingua", load_lingua, texts),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{os.cpu_count()} cores {platform.machine()}, load {os.getloadavg()[0]:.1f}",
        "versions": {p: version(p) for p in ("py3langid", "lingua-language-detector")},
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
