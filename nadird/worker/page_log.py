"""The worker's line per page fetched (`page_crawled`), at the level the
worker's config asks for (`log_pages`)."""

from __future__ import annotations

from typing import Any

from nadird.common.logs import gate, get_logger
from nadird.protocol.messages import PageResult

_log = get_logger()


def page_crawled(level: str, page: PageResult, lease: str, domain: str, attempt: int) -> None:
    """One line per page, like "Crawled (200) <GET url>": what the worker got
    for one URL of a bag. Logged by the worker, which has every fact at hand
    (the master never sees the bytes received, and is the one process of the
    cluster that cannot spare the time)."""
    if not (gate.info if level == "info" else gate.debug):
        return
    event: dict[str, Any] = {
        "url": page.url,
        "status": page.status,
        "bytes": page.size,
        "ms": round(page.elapsed * 1000, 1),
        "depth": page.depth,
        "attempt": attempt,
        "lease": lease,
        "domain": domain,
    }
    if page.final_url != page.url:
        event["final_url"] = page.final_url
    if page.error is not None:
        event["error"] = page.error[:200]
    if page.links:
        event["links"] = len(page.links)
    (_log.info if level == "info" else _log.debug)("page_crawled", **event)
