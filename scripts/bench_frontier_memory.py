"""Master memory with a large queue: N queued URLs across D domains.

Admits URLs through the master's real admission path (Bloom filter, durable
frontier, per-domain state) in batches the size of a results message, then
reports the process RSS, the seen set's size and the frontier file's size.

    python scripts/bench_frontier_memory.py --urls 10000000 --domains 100000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

from bench_common import rss_mb  # scripts/: on sys.path when run as a script

from nadird.common.urls import fingerprint
from nadird.job.spec import Job
from nadird.master.frontier.admission import Admission
from nadird.master.frontier.queues import Frontier
from nadird.master.frontier.seen import SeenSet
from nadird.master.state.frontier_db import FrontierDB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--urls", type=int, default=10_000_000)
    parser.add_argument("--domains", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=640, help="URLs per admission call")
    parser.add_argument("--fp-rate", type=float, default=0.001)
    parser.add_argument("--dir", help="state directory (default: a temp dir)")
    args = parser.parse_args()

    state = Path(args.dir or tempfile.mkdtemp(prefix="nadird-bench-"))
    db = FrontierDB(state / "frontier.db")
    seen = SeenSet(args.urls, args.fp_rate)
    frontier = Frontier(db)
    admission = Admission(seen, frontier, {"default": Job()})
    start_rss = rss_mb()
    started = time.perf_counter()
    for base in range(0, args.urls, args.batch):
        # d<k>.com, not d<k>.example.com: the frontier groups URLs by
        # registrable domain, and every d<k>.example.com is example.com.
        urls = [
            f"http://www.d{i % args.domains}.com/item/{i}"
            for i in range(base, min(args.urls, base + args.batch))
        ]
        admission.admit("default", urls, [fingerprint(u) for u in urls], depth=2)
        db.commit()  # more often than the master, which commits every 0.2 s at most
        if base and base % 1_000_000 < args.batch:
            print(
                f"{base:>10} queued, rss {rss_mb():.0f} MB, "
                f"{base / (time.perf_counter() - started):.0f} URLs/s",
                file=sys.stderr,
            )
    seconds = time.perf_counter() - started
    db.commit()
    result = {
        "urls_queued": frontier.queued,
        "domains": args.domains,
        "rss_mb": round(rss_mb(), 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_at_start_mb": round(start_rss, 1),
        "seen_set_mb": round(seen.size_bytes / 2**20, 1),
        "frontier_file_mb": round(os.path.getsize(state / "frontier.db") / 2**20, 1),
        "admit_seconds": round(seconds, 1),
        "urls_per_s": round(args.urls / seconds),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
