"""How long a request takes from its lane's lease check to the last check
before its bytes are written (worker/fetch/send_gate.py): the window in
which a stopped worker would have sent a request on a lease gone by. Each
check calls the bag's fence predicate; this records when. A bag of
`--pages` pages is crawled against the synthetic web on loopback, once
reusing pooled connections and once with a new connection per request
(`Connection: close`).

    python scripts/bench_send_gap.py --pages 500
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import deque

from nadird.common.urls import fingerprint
from nadird.config import FetchConfig, ThrottleConfig
from nadird.job.spec import Job
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread
from nadird.worker.bag import BagRun, crawl_bag
from nadird.worker.fetch.fetcher import Fetcher
from nadird.worker.fetch.throttle import DomainPace, Pacer
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask


async def gaps(urls: list[str], job: Job) -> list[float]:
    """Seconds from each lane check to the same request's check at the send."""
    cfg = FetchConfig(resolve={"*.test": "127.0.0.1"}, allow_private=True)
    checks: list[float] = []

    def fenced() -> bool:
        checks.append(time.perf_counter())
        return False

    client = Fetcher(cfg)
    await client.start()
    try:
        pacer = Pacer(0.0, DomainPace(adaptive=0.0), ThrottleConfig(adaptive=False))
        tasks = deque(PageTask(u, fingerprint(u), 0) for u in urls)
        run = BagRun(tasks, 1, pacer, fenced=fenced)
        processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
        await crawl_bag(run, processor, lambda _result: None)
    finally:
        await client.close()
    # One lane: the checks alternate, the lane's then the send's.
    return [sent - lane for lane, sent in zip(checks[::2], checks[1::2], strict=True)]


def report(name: str, seconds: list[float]) -> None:
    us = sorted(s * 1e6 for s in seconds)
    p99 = us[int(0.99 * (len(us) - 1))]
    print(
        f"{name:<22} n={len(us):4d}  median {statistics.median(us):7.0f} us  "
        f"p99 {p99:7.0f} us  max {us[-1]:7.0f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=500)
    args = parser.parse_args()
    graph = SiteGraph(hosts=1, pages=args.pages)
    with run_in_thread(graph) as web:
        host = next(iter(graph.hosts))
        urls = [f"http://{host}:{web.port}/p/{n}" for n in range(args.pages)]
        kept = asyncio.run(gaps(urls, Job(robots=False)))
        fresh = asyncio.run(gaps(urls, Job(robots=False, headers={"Connection": "close"})))
    report("pooled connection", kept)
    report("new connection each", fresh)


if __name__ == "__main__":
    main()
