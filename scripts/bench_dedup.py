"""The seen set: memory per URL and the real false-positive rate.

For each size N (--urls, default 1M and 10M) a fresh process (so RSS is its
own) builds the master's SeenSet sized for N at --fp-rate, through the same
calls admission makes (`absent` then `mark`, in results-sized batches), with
N distinct 16-byte fingerprints. It reports:

- the Bloom filter's bytes and bits per URL against the theory,
  -log2(p) / ln 2 = 1.4427 * log2(1/p) bits (14.38 at p = 0.001);
- the process RSS growth while the set filled (what the master pays);
- the snapshot file's size (seen.bloom, what a restart reads);
- the false-positive rate measured on --probes fingerprints never added,
  against the configured rate, and the share of the N fingerprints that
  `absent` wrongly took as seen while the set filled (URLs never crawled).

    python scripts/bench_dedup.py --urls 1000000,10000000 --probes 10000000

Fingerprints are blake2b-128 of distinct strings, as the worker computes
them for URLs (any uniform 16 bytes behave the same).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BATCH = 640  # links of one results message (32 pages x 20 links)


def rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def fingerprints(start: int, count: int, salt: str) -> list[bytes]:
    return [
        hashlib.blake2b(f"{salt}/{i}".encode(), digest_size=16).digest()
        for i in range(start, start + count)
    ]


def measure(urls: int, fp_rate: float, probes: int) -> dict[str, Any]:
    """Runs in a child process: fill a SeenSet with `urls` fingerprints."""
    from nadird.master.frontier.seen import SeenSet

    before = rss_bytes()
    seen = SeenSet(urls, fp_rate)
    taken_as_seen = 0
    started = time.perf_counter()
    for base in range(0, urls, BATCH):
        batch = fingerprints(base, min(BATCH, urls - base), "url")
        fresh = seen.absent(batch)
        taken_as_seen += len(batch) - len(fresh)
        for fp in fresh:
            seen.mark(fp)
    fill_seconds = time.perf_counter() - started
    after = rss_bytes()
    false_hits = 0
    for base in range(0, probes, 100_000):
        batch = fingerprints(base, min(100_000, probes - base), "probe")
        false_hits += len(batch) - len(seen.absent(batch))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "seen.bloom"
        seen.snapshot(path)
        snapshot_bytes = path.stat().st_size
    bits = seen.size_bytes * 8
    theory = -math.log2(fp_rate) / math.log(2)
    measured = false_hits / probes
    return {
        "urls": urls,
        "fp_rate_configured": fp_rate,
        "bloom_bytes": seen.size_bytes,
        "bits_per_url": round(bits / urls, 3),
        "theory_bits_per_url": round(theory, 3),
        "memory_vs_theory": round(bits / urls / theory, 4),
        "rss_growth_bytes": after - before,
        "rss_growth_bits_per_url": round(8 * (after - before) / urls, 3),
        "rss_mb": round(after / 2**20, 1),
        "snapshot_bytes": snapshot_bytes,
        "probes": probes,
        "false_positives": false_hits,
        "fp_rate_measured": round(measured, 6),
        "fp_ratio_to_configured": round(measured / fp_rate, 3),
        "fp_ratio_95ci": [round(x / fp_rate, 3) for x in wilson(false_hits, probes)],
        "taken_as_seen_while_filling": taken_as_seen,
        "fill_seconds": round(fill_seconds, 1),
        "checks_per_s": round(urls / fill_seconds),
    }


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % confidence interval of a rate (Wilson score)."""
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", default="1000000,10000000", help="sizes, comma-separated")
    parser.add_argument("--fp-rate", type=float, default=0.001)
    parser.add_argument("--probes", type=int, default=10_000_000, help="FP-rate probes")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.fp_rate, args.probes)))
        return 0
    from nadird import __version__

    print(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                "cores": os.cpu_count(),
                "python": platform.python_version(),
                "nadird": __version__,
                "rbloom": _version("rbloom"),
                "load_at_start": [round(x, 2) for x in os.getloadavg()],
            }
        ),
        flush=True,
    )
    ok = True
    for size in (int(s) for s in args.urls.split(",")):
        child = [sys.executable, __file__, "--child", str(size)]
        child += ["--fp-rate", str(args.fp_rate), "--probes", str(args.probes)]
        result = json.loads(subprocess.run(child, check=True, capture_output=True).stdout)
        result["memory_target_met"] = result["memory_vs_theory"] <= 1.10
        result["fp_target_met"] = result["fp_ratio_to_configured"] <= 1.2
        ok = ok and result["memory_target_met"] and result["fp_target_met"]
        print(json.dumps(result), flush=True)
    return 0 if ok else 1


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)


if __name__ == "__main__":
    sys.exit(main())
