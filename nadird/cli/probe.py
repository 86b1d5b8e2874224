"""`nadird parse URL`: one URL through a worker's own code, printed as JSON.

Rules are written by trial: this fetches the page exactly as a worker of the
job would (robots.txt, address policy, redirects, decoding, rendering when
the job renders) by running a one-URL bag through `crawl_bag`, and prints
what the worker would send the master: the extracted fields and the links
the job follows. Nothing is stored and no master is needed.
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from typing import TYPE_CHECKING, Any, TextIO

from nadird.common.urls import canonicalize, domain_of, fingerprint
from nadird.config import Config
from nadird.job.parser_choice import parser_description
from nadird.job.spec import JAVASCRIPT, Job
from nadird.protocol.messages import PageResult
from nadird.worker.bag import BagRun, RobotsGate, crawl_bag
from nadird.worker.fetch.fetcher import Fetcher
from nadird.worker.fetch.robots import RobotsCache
from nadird.worker.fetch.throttle import Pacer
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask
from nadird.worker.render.step import RenderStep, new_renderer
from nadird.worker.render.subrequests import SubrequestPolicy

if TYPE_CHECKING:
    from nadird.worker.render.renderer import Renderer  # imports Playwright

EXIT_OK, EXIT_FAILED = 0, 1


def _renderer(config: Config, job: Job) -> Renderer | None:
    """A browser when the job renders (ConfigError, exit 2, if none can run here)."""
    if job.render is False:
        return None
    worker = config.worker
    if JAVASCRIPT not in worker.capabilities:
        worker = dataclasses.replace(worker, capabilities=[*worker.capabilities, JAVASCRIPT])
    return new_renderer(dataclasses.replace(config, worker=worker))


def report(url: str, result: PageResult | None, run: BagRun, job: Job) -> dict[str, Any]:
    if result is None:  # handed back: a 429/503, or robots.txt unreachable
        why = "throttled (429/503)" if run.throttled else "robots.txt unreachable"
        return {"url": url, "error": f"not fetched: {why}; a worker would try again later"}
    found = {
        "url": result.url,
        "final_url": result.final_url,
        "status": result.status,
        "content_type": result.content_type,
        "error": result.error,
        "redirects": result.redirects,
        "canonical": result.canonical,
        "headers": result.headers,
        "rendered": result.rendered,
        "fields": result.data,
        "item_key": result.item_key,  # what the job's item_key made of them
        "links": result.links,
        "parser": parser_description(job),  # lxml or Lexbor for the job's HTML pages
    }
    if _defers_to_canonical(result):  # else an empty `fields` reads as a broken rule
        found["note"] = (
            f"the page names {result.canonical} as its canonical URL: a worker records "
            "it without fields and follows that URL, whose page is extracted instead"
        )
    return found


def _defers_to_canonical(result: PageResult) -> bool:
    """Whether the worker left the page to its canonical URL (worker/pages.py)."""
    return bool(result.canonical) and not result.data and result.links == [result.canonical]


async def probe(config: Config, job: Job, url: str, out: TextIO) -> int:
    """Fetch and parse `url` with `job`'s rules; print the JSON report.

    Exit status 0 when the page was fetched and parsed, 1 when the result
    is an error (fetch failed, refused address, robots.txt disallows it).
    """
    canonical = canonicalize(url)
    fetch = config.fetch
    fetcher = Fetcher(fetch)
    renderer = _renderer(config, job)
    await fetcher.start()
    try:
        if renderer is not None:
            await renderer.start()
        pacer = Pacer(0.0)
        gate = None
        if job.robots:
            robots = RobotsCache(fetcher, fetch.robots)
            gate = RobotsGate(robots, pacer, fetch.throttle.max_crawl_delay, job.proxies)
        hop_check = gate.hop_check if gate is not None else None
        render = None
        if renderer is not None:
            domain = domain_of(canonical)
            policy = SubrequestPolicy(
                fetcher, job, fetch.render, domain, pacer.turn, hop_check, renderer.cache
            )
            render = RenderStep(renderer, job, policy, fetch)
        links = LinkPipeline(job, fetch, DomainCounts())
        processor = PageProcessor(fetcher, job, fetch, links, hop_check, render)
        run = BagRun(deque([PageTask(canonical, fingerprint(canonical), 0)]), 1, pacer)
        results: list[PageResult] = []
        await crawl_bag(run, processor, results.append, gate)
    finally:
        if renderer is not None:
            await renderer.close()
        await fetcher.close()
    result = results[0] if results else None
    json.dump(report(canonical, result, run, job), out, indent=2, ensure_ascii=False)
    out.write("\n")
    return EXIT_OK if result is not None and result.error is None else EXIT_FAILED
