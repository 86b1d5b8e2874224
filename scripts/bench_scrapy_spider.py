"""The Scrapy peer of `nadird crawl` for scripts/bench_vs_scrapy.py.

Does the job nadird's benchmark config does: start from the seeds, follow
every link whose host is one of the site hosts (allowed_domains), fetch each
URL once (PDFs and 404s included: nadird stores those too), extract the same
four fields from HTML pages (`--title-only`: the <title>, for
scripts/bench_real_site.py), store one JSON line per response. robots.txt is
not obeyed and there is no delay, as in the nadird run.

`*.test` names resolve to 127.0.0.1 through a pinned resolver (the equivalent
of `nadird crawl --resolve '*.test=127.0.0.1'`), so no request leaves loopback
and the Host header carries the real name, which the synthetic web needs.

    python scripts/bench_scrapy_spider.py --seeds-file seeds.txt \
        --hosts site-0.test,site-1.test --out items.jsonl --concurrency 40 --per-domain 2

Benchmark-only: needs the `bench` extra (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer
from twisted.internet.interfaces import IResolverSimple
from zope.interface import implementer

PINNED_SUFFIX = ".test"
PINNED_ADDRESS = "127.0.0.1"


@implementer(IResolverSimple)
class PinnedResolver(CachingThreadedResolver):
    """Scrapy's default resolver, except that `*.test` is always 127.0.0.1."""

    # Twisted's method name, hence not snake case.
    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred[str]:
        if name.lower().rstrip(".").endswith(PINNED_SUFFIX):
            return defer.succeed(PINNED_ADDRESS)
        return super().getHostByName(name, timeout)


class SiteSpider(scrapy.Spider):
    name = "bench"

    def __init__(
        self, seeds: list[str], hosts: list[str], title_only: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.start_urls = seeds
        self.title_only = title_only
        self.allowed_domains = hosts
        # deny_extensions=[]: nadird fetches /files/N.pdf links too; Scrapy's
        # default would skip them and the two crawls would not be the same job.
        # Scope is left to OffsiteMiddleware (allowed_domains): the extractor's
        # own allow_domains compares host:port and so refuses every link here.
        self.links = LinkExtractor(deny_extensions=[], unique=True)

    async def start(self) -> AsyncIterator[Any]:
        # Scrapy's default start requests bypass the duplicate filter, so each
        # home page would be fetched twice (once more when a page links it).
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        item: dict[str, Any] = {
            "url": response.url,
            "status": response.status,
            "depth": response.meta.get("depth", 0),
        }
        html = isinstance(response, TextResponse) and b"html" in (
            response.headers.get("Content-Type") or b""
        )
        if html and response.status < 400:
            assert isinstance(response, TextResponse)
            item["data"] = self.fields(response)
            for link in self.links.extract_links(response):
                yield scrapy.Request(link.url, callback=self.parse)
        yield item

    def fields(self, response: TextResponse) -> dict[str, Any]:
        if self.title_only:  # scripts/bench_real_site.py: the <title> only
            return {"title": response.css("title::text").get()}
        return {
            "title": response.css("title::text").get(),
            "h1": response.css("h1::text").get(),
            "price": response.css("span.price::text").get(),
            "sku": response.xpath('//meta[@name="sku"]/@content').get(),
        }


def settings(out: str, concurrency: int, per_domain: int, log_level: str) -> dict[str, Any]:
    return {
        "ROBOTSTXT_OBEY": False,
        "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": per_domain,
        # 404 pages are results in nadird (stored with their status); let
        # them reach the callback here too instead of being dropped.
        "HTTPERROR_ALLOW_ALL": True,
        "TWISTED_DNS_RESOLVER": f"{__name__}.PinnedResolver",
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": log_level,
        "FEEDS": {out: {"format": "jsonlines", "overwrite": True}},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds-file", required=True, help="one seed URL per line")
    parser.add_argument("--hosts", required=True, help="comma-separated allowed host names")
    parser.add_argument("--out", required=True, help="JSON lines feed of the items")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--per-domain", type=int, default=8)
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument("--title-only", action="store_true", help="extract <title> only")
    args = parser.parse_args(argv)
    with open(args.seeds_file, encoding="utf-8") as fh:
        seeds = [line.strip() for line in fh if line.strip()]
    process = CrawlerProcess(settings(args.out, args.concurrency, args.per_domain, args.log_level))
    process.crawl(SiteSpider, seeds=seeds, hosts=args.hosts.split(","), title_only=args.title_only)
    process.start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
