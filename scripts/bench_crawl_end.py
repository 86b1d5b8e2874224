"""How long a small `nadird crawl` takes, and how much of it comes after its
last page: the wait until the master sees the crawl complete.

A synthetic site of a few pages on loopback, crawled `--runs` times by
`nadird crawl` (one worker, no delay). For each run: the command's wall time,
and the seconds from the worker's last `page_crawled` line to the master's
`crawl_complete` (both in the command's JSON log, one clock).

    python scripts/bench_crawl_end.py --pages 8 --runs 5
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread


def _at(line: dict[str, object]) -> float:
    return datetime.fromisoformat(str(line["ts"]).replace("Z", "+00:00")).timestamp()


def one_crawl(port: int, work: Path) -> tuple[float, float]:
    """(the command's wall seconds, seconds from its last page to complete)."""
    store = work / "crawl.db"
    store.unlink(missing_ok=True)
    args = [
        *(sys.executable, "-m", "nadird", "crawl", f"http://site-0.test:{port}/"),
        *("--resolve", "*.test=127.0.0.1", "--allow-private", "--delay", "0"),
        *("--workers", "1", "--store", f"sqlite:///{store}", "--log-format", "json"),
    ]
    started = time.monotonic()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120, cwd=work)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    lines = [json.loads(x) for x in proc.stderr.splitlines() if x.startswith("{")]
    last_page = max(_at(x) for x in lines if x.get("event") == "page_crawled")
    complete = next(_at(x) for x in lines if x.get("event") == "crawl_complete")
    return wall, complete - last_page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    walls, tails = [], []
    site = SiteGraph(hosts=1, pages=opts.pages)
    with run_in_thread(site) as web, tempfile.TemporaryDirectory() as tmp:
        for _ in range(opts.runs):
            wall, tail = one_crawl(web.port, Path(tmp))
            walls.append(wall)
            tails.append(tail)
    result = {
        "pages": opts.pages,
        "runs": opts.runs,
        "wall_median_s": round(statistics.median(walls), 2),
        "last_page_to_complete_median_s": round(statistics.median(tails), 3),
        "last_page_to_complete_max_s": round(max(tails), 3),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
