"""Near-duplicates: how well the fingerprint tells copies from other texts,
and what the master's index costs at millions of articles.

Fingerprints (`--texts`): the main text of the HTML pages under --docs
(documentation trees packages install: real prose, many pages in one
vocabulary, the hard case for telling texts apart), of 300 to 3,000 words.
Each text is edited as copies are: another footer (a 30-word note), a
light edit (one word in a hundred replaced), a paragraph cut, and a wire
copy (a byline, the footer and the light edit together). It reports, for
nadird's fingerprint (common/simhash.py) and for trafilatura's Simhash,
the share of copies within NEAR_BITS and the share the index finds (a
shared band and within NEAR_BITS), the closest pairs of different texts
and how many fall within NEAR_BITS (false matches), and the CPU time per text.

Index (`--articles`, default 1M and 10M): a fresh frontier.db per size,
filled in bulk with N random fingerprints and 60-character URLs as the
master's index holds them (state/neardup_db.py); then --lookups lookups
through NearDupTable.first_of (new texts, which are indexed, and copies
a few bits from a stored one) timed one by one, committed every
COMMIT_EVERY as the master commits, and the file's bytes per article. The
process's RSS is reported too: the index lives on disk (the RSS includes
the benchmark's own array of the N fingerprints, 8 bytes each).

    python scripts/bench_neardup.py --texts --articles 1000000,10000000
"""

from __future__ import annotations

import argparse
import glob
import itertools
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from bench_common import rss_mb  # scripts/: on sys.path when run as a script

from nadird.common.simhash import NEAR_BITS, bands, distance, text_simhash
from nadird.master.state.frontier_db import FrontierDB
from nadird.master.state.neardup_db import _JOB_SHIFT, CHUNK_BITS, CHUNK_ENTRIES, entry_dtype

COMMIT_EVERY = 200  # lookups between commits (the master: a commit every 0.2 s)
DOCS = (
    "/usr/share/doc/python3.11/html/library/*.html",
    "/usr/share/doc/postgresql-doc-15/html/*.html",
    "/usr/share/doc/python-django-doc/html/**/*.html",
)
FOOTER = (
    " This story first appeared in the Coastal Ledger. Subscribe to our newsletter for daily"
    " updates from the harbour, the city council and the courts, and follow us for more."
)


def load_texts(patterns: tuple[str, ...], per_tree: int) -> list[str]:
    import trafilatura

    texts = []
    for pattern in patterns:
        for path in sorted(glob.glob(pattern, recursive=True))[:per_tree]:
            html = Path(path).read_text(encoding="utf-8", errors="replace")
            text = trafilatura.extract(html)
            if text and 300 < len(text.split()) < 3000:
                texts.append(text)
    return texts


def edits(seed: int) -> dict[str, Callable[[str], str]]:
    rnd = random.Random(seed)

    def light(text: str) -> str:
        words = text.split(" ")
        for _ in range(max(1, len(words) // 100)):
            words[rnd.randrange(len(words))] = rnd.choice(["the", "city", "said", "report"])
        return " ".join(words)

    def cut(text: str) -> str:
        paragraphs = text.split("\n")
        if len(paragraphs) > 3:
            del paragraphs[rnd.randrange(1, len(paragraphs))]
        return "\n".join(paragraphs)

    return {
        "footer": lambda text: text + FOOTER,
        "light_edit": light,
        "paragraph_cut": cut,
        "wire_copy": lambda text: "By Staff Reporter\n" + light(text) + FOOTER,
    }


def trafilatura_print(text: str) -> int:
    from trafilatura.deduplication import Simhash

    value = Simhash(text).hash
    return value - (1 << 64) if value >= 1 << 63 else value


def fingerprints(texts: list[str]) -> dict[str, Any]:
    makers: dict[str, Callable[[str], int | None]] = {
        "nadird (word pairs)": text_simhash,
        "trafilatura Simhash": trafilatura_print,
    }
    report: dict[str, Any] = {"texts": len(texts), "near_bits": NEAR_BITS}
    for name, make in makers.items():
        started = time.process_time()
        prints = [make(text) for text in texts]
        ms = 1000 * (time.process_time() - started) / len(texts)
        kept = [(t, p) for t, p in zip(texts, prints, strict=True) if p is not None]
        found: dict[str, Any] = {"cpu_ms_per_text": round(ms, 2)}
        for edit, change in edits(1).items():
            near = found_by_index = 0
            for text, original in kept:
                copy = make(change(text))
                if copy is None:
                    continue
                close = distance(original, copy) <= NEAR_BITS
                near += close
                found_by_index += close and bool(set(bands(original)) & set(bands(copy)))
            found[edit] = {
                "within_near_bits": round(near / len(kept), 3),
                "found_by_index": round(found_by_index / len(kept), 3),
            }
        pairs = sorted(distance(a, b) for (_, a), (_, b) in itertools.combinations(kept, 2))
        found["different_pairs"] = len(pairs)
        found["closest_different"] = pairs[:5]
        found["different_within_near_bits"] = sum(d <= NEAR_BITS for d in pairs)
        report[name] = found
    return report


def _chunks(keys: np.ndarray, entries: np.ndarray) -> Iterator[tuple[int, bytes]]:
    """(row key, packed entries) of each bucket's chunks; `keys` sorted."""
    unique, starts = np.unique(keys, return_index=True)
    ends = [*starts[1:], len(keys)]
    for key, start, end in zip(unique, starts, ends, strict=True):
        for number, at in enumerate(range(start, end, CHUNK_ENTRIES)):
            chunk = entries[at : min(at + CHUNK_ENTRIES, end)]
            yield (int(key) << CHUNK_BITS) | number, chunk.tobytes()


def fill(db_path: Path, count: int, seed: int) -> np.ndarray:
    """The index of FrontierDB at `db_path`, filled in bulk with `count`
    random fingerprints of job 1 (each band's bucket written whole, in chunks)."""
    db = FrontierDB(db_path)
    db.near_dups.first_of("bench", 0, "https://bench.test/0", NEAR_BITS)  # job 1 exists
    assert db.close()
    prints = np.random.default_rng(seed).integers(-(2**63), 2**63 - 1, size=count, dtype=np.int64)
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-262144")
    url = "https://news{:07d}.example/2026/03/14/a-headline-of-usual-length-{:09d}"
    chunk = 1_000_000
    for start in range(0, count, chunk):
        ids = range(start + 2, min(start + chunk, count) + 2)
        conn.executemany(
            "INSERT INTO near_dup_texts (id, url) VALUES (?, ?)",
            ((i, url.format(i % 10_000_000, i)) for i in ids),
        )
    unsigned = prints.view(np.uint64)
    entries = np.empty(count, dtype=entry_dtype())
    entries["simhash"], entries["text"] = unsigned, np.arange(2, count + 2)
    for band in range(4):
        bits = ((unsigned >> np.uint64(16 * band)) & np.uint64(0xFFFF)).astype(np.int64)
        keys = (1 << _JOB_SHIFT) | (band << 16) | bits
        order = np.argsort(keys, kind="stable")
        conn.executemany(
            "INSERT OR REPLACE INTO near_dup_buckets (key, entries) VALUES (?, ?)",
            _chunks(keys[order], entries[order]),
        )
        conn.commit()
    conn.close()
    return prints


def index(count: int, lookups: int, workdir: Path) -> dict[str, Any]:
    db_path = workdir / f"frontier-{count}.db"
    started = time.monotonic()
    prints = fill(db_path, count, seed=count)
    built = time.monotonic() - started
    size = sum(os.path.getsize(p) for p in workdir.glob(f"frontier-{count}.db*"))
    rss_before = rss_mb()
    db = FrontierDB(db_path)
    table = db.near_dups
    rnd = random.Random(7)
    timings: dict[str, list[float]] = {"new_text": [], "copy": []}
    matched = 0
    for i in range(lookups):
        if i % 2:
            kind, fingerprint = "new_text", rnd.getrandbits(64) - (1 << 63)
        else:
            kind, base = "copy", int(prints[rnd.randrange(count)])
            flips = rnd.sample(range(64), rnd.randint(1, 3))
            fingerprint = base ^ sum(1 << b for b in flips)
            fingerprint = fingerprint - (1 << 64) if fingerprint >= 1 << 63 else fingerprint
        t0 = time.perf_counter()
        first = table.first_of("bench", fingerprint, f"https://new.test/{i}", NEAR_BITS)
        timings[kind].append(time.perf_counter() - t0)
        matched += kind == "copy" and first is not None
        if i % COMMIT_EVERY == COMMIT_EVERY - 1:
            db.commit()  # as the master commits its frontier, every 0.2 s
    db.commit()
    db.close()
    return {
        "articles": count,
        "build_seconds": round(built, 1),
        "file_bytes_per_article": round(size / count, 1),
        "lookup_us": {
            kind: {
                "median": round(1e6 * statistics.median(ts), 1),
                "p99": round(1e6 * sorted(ts)[int(len(ts) * 0.99)], 1),
            }
            for kind, ts in timings.items()
        },
        "copies_found": round(matched / len(timings["copy"]), 3),
        "rss_mb_during_lookups": round(rss_mb(), 1),
        "rss_mb_growth_during_lookups": round(rss_mb() - rss_before, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", action="store_true", help="measure the fingerprints")
    parser.add_argument("--per-tree", type=int, default=250, help="pages per documentation tree")
    parser.add_argument("--articles", default="", help="index sizes, e.g. 1000000,10000000")
    parser.add_argument("--lookups", type=int, default=20_000)
    args = parser.parse_args()
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "cpus": os.cpu_count(),
    }
    if args.texts:
        report["fingerprints"] = fingerprints(load_texts(DOCS, args.per_tree))
        print(json.dumps(report["fingerprints"], indent=1), file=sys.stderr)
    sizes = [int(n) for n in args.articles.split(",") if n]
    with tempfile.TemporaryDirectory() as tmp:
        report["index"] = [index(n, args.lookups, Path(tmp)) for n in sizes]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
