"""The new articles a feeds job's pages named (job/feeds.py), once admitted:
a page that names enough of them becomes a hub (revisits/learned_hubs.py),
and each article is noted with what named it, for its source, its
discovery latency and the fields its entry stated (observe/discovery.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from nadird.master.observe.discovery import Discovery
from nadird.master.revisits.scheduler import Revisits
from nadird.protocol.messages import PageResult

# Per batch of links of a feeds job's page, the fingerprints of its new
# article links (frontier/admission.py fills it).
NewArticles = list[list[bytes]]


class FeedLinks:
    def __init__(self, revisits: Revisits, discovery: Discovery) -> None:
        self._revisits = revisits
        self._discovery = discovery

    def found(
        self,
        job_name: str,
        pages: Sequence[PageResult],
        linked: Sequence[bytes],
        articles: Sequence[Sequence[bytes]],
    ) -> None:
        """`linked`: the fingerprints of the pages whose links were
        admitted; `articles`: for each, the article links admitted (new)."""
        new = dict(zip(linked, articles, strict=True))
        revisits = self._revisits
        revisits.found_articles(job_name, ((fp, len(found)) for fp, found in new.items()))
        job = revisits.jobs.get(job_name)
        if job is None:
            return
        now = time.time()
        for page in pages:
            found = new.get(page.fp)
            if found is not None:
                self._discovery.named(page, job, found, revisits.is_hub(page.fp), now)
