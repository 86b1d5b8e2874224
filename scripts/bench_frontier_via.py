"""The cost of queue.via (the page whose link admitted a URL): frontier.db
bytes per queued URL and master CPU, with and without it.

Admits N URLs through the master's real admission path as the links of
pages (LINKS per page, like a results message of PAGES pages), once keeping
each URL's via (a master with warc:) and once without (a master without:
via NULL), then times what the archive adds per page: reading the vias of a
message's pages back by row id (FrontierDB.vias).

    python scripts/bench_frontier_via.py --urls 1000000
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from nadird.common.urls import fingerprint
from nadird.job.spec import Job
from nadird.master.frontier.admission import Admission, LinkBatch
from nadird.master.frontier.queues import Frontier
from nadird.master.frontier.seen import SeenSet
from nadird.master.state.frontier_db import FrontierDB

LINKS = 40  # new links per page
PAGES = 16  # pages per results message


def page_url(n: int, domains: int) -> str:
    return f"https://www.shop-{n % domains}.example.com/catalogue/category-{n % 97}/item-{n}.html"


def fill(path: Path, urls: int, domains: int, keep_via: bool) -> tuple[float, FrontierDB]:
    """Admit `urls` URLs; the CPU seconds it took, and the database."""
    db = FrontierDB(path)
    admission = Admission(SeenSet(urls, 0.001), Frontier(db), {"default": Job()})
    admission.keep_via = keep_via  # a master without warc: keeps none
    started = time.process_time()
    for base in range(0, urls, LINKS * PAGES):
        batches: list[LinkBatch] = []
        for page in range(base, min(urls, base + LINKS * PAGES), LINKS):
            links = [page_url(n, domains) for n in range(page, min(urls, page + LINKS))]
            fps = [fingerprint(u) for u in links]
            batches.append((links, fps, 2, page_url(page + urls, domains), (), {}))
        admission.admit_many("default", batches)
        db.commit()
    return time.process_time() - started, db


def size_of(path: Path) -> int:
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.execute("VACUUM")
    raw.close()
    return path.stat().st_size


def lookups(db: FrontierDB, messages: int) -> float:
    """Microseconds per page of reading vias back, PAGES pages a message."""
    rows = list(
        db._db.execute("SELECT id, fp FROM queue ORDER BY random() LIMIT ?", (messages * PAGES,))
    )
    started = time.process_time()
    for at in range(0, len(rows), PAGES):
        db.vias(rows[at : at + PAGES])
    return (time.process_time() - started) / max(1, len(rows)) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--domains", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=5000)
    args = parser.parse_args()
    out: dict[str, object] = {
        "urls": args.urls,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }
    with tempfile.TemporaryDirectory(prefix="nadird-bench-") as tmp:
        for keep in (False, True):
            path = Path(tmp) / f"frontier-{keep}.db"
            cpu, db = fill(path, args.urls, args.domains, keep)
            if keep:
                out["lookup_us_per_page"] = round(lookups(db, args.messages), 2)
            db.close()
            name = "with_via" if keep else "without_via"
            out[name] = {
                "admission_cpu_s": round(cpu, 2),
                "us_per_url": round(cpu / args.urls * 1e6, 2),
                "bytes": size_of(path),
                "bytes_per_url": round(size_of(path) / args.urls, 1),
            }
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
