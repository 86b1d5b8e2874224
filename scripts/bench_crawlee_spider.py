"""The Crawlee for Python peer of `nadird crawl` for scripts/bench_real_site.py.

The same job as the nadird and Scrapy runs: start from the seeds, follow every
<a href> to the same host (Crawlee's `enqueue_links`, strategy
'same-hostname'), fetch each URL once (404 pages included: they are records
on the other sides too, hence `ignore_http_error_status_codes`), take the
<title> of HTML pages, write one JSON line per response. robots.txt is not
read (Crawlee's default) and there is no delay.

The crawler is `ParselCrawler` with Crawlee's default HTTP client (impit) and
its in-memory storage (the request queue and the dataset are not written to
disk; the records go to the JSON-lines file the handler writes, as Scrapy's
feed does). Crawlee has no per-host limit, so the number of requests in flight
is fixed at `--concurrency` (min = desired = max: its autoscaling would
otherwise shrink the pool on a loaded machine and measure the load, not the
crawler).

    python scripts/bench_crawlee_spider.py --seeds-file seeds.txt \
        --out items.jsonl --concurrency 6

Benchmark-only: needs the `bench` extra (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import IO

from crawlee import ConcurrencySettings
from crawlee.crawlers import ParselCrawler, ParselCrawlingContext
from crawlee.storage_clients import MemoryStorageClient

NOT_FOUND = [404, 403, 410]


def crawler(out: IO[str], concurrency: int) -> ParselCrawler:
    fixed = ConcurrencySettings(
        min_concurrency=concurrency, desired_concurrency=concurrency, max_concurrency=concurrency
    )
    spider = ParselCrawler(
        storage_client=MemoryStorageClient(),
        concurrency_settings=fixed,
        ignore_http_error_status_codes=NOT_FOUND,
        max_requests_per_crawl=None,
        respect_robots_txt_file=False,
    )

    @spider.router.default_handler
    async def page(context: ParselCrawlingContext) -> None:
        response = context.http_response
        item: dict[str, object] = {"url": context.request.url, "status": response.status_code}
        content_type = response.headers.get("content-type") or ""
        if "html" in content_type and response.status_code < 400:
            item["title"] = context.selector.css("title::text").get()
            await context.enqueue_links(strategy="same-hostname")
        out.write(json.dumps(item) + "\n")

    return spider


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds-file", required=True, help="one seed URL per line")
    parser.add_argument("--out", required=True, help="JSON lines, one record per response")
    parser.add_argument("--concurrency", type=int, default=6, help="requests in flight")
    args = parser.parse_args(argv)
    with open(args.seeds_file, encoding="utf-8") as fh:
        seeds = [line.strip() for line in fh if line.strip()]
    with open(args.out, "w", encoding="utf-8") as out:
        asyncio.run(crawler(out, args.concurrency).run(seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
