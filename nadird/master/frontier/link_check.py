"""What the master checks of the links a worker reports before they may
enter the seen set.

A worker sends each link with its fingerprint. Trusted as sent, a wrong one
(a worker of another version canonicalizing otherwise, a bug, a hostile
host) would mark some other URL seen for good, so that URL would never be
crawled, or would let one URL in twice. So the master computes the
fingerprint itself, from the URL in its own canonical form, the way a worker
does (`urls.canonicalize`, `urls.fingerprint`, `RequestSpec.fingerprint`),
and the job's link rules (`links.scope`, `allow`, `deny`, `follow`) are
applied again, judged from the page's final URL as on the worker.

Only links the seen set does not know under the fingerprint they came with
are checked: a known one admits nothing, so a lie there can only keep its
own link out, which leaving it out does as well. In steady state most links
are known, and the check costs the new ones alone.

A link whose fingerprint or spelling is wrong is kept under the master's
fingerprint (the URL is what the worker found; the fingerprint only follows
from it, and a link dropped for an older worker's spelling would be lost); a
link that is no URL, or outside the job's rules, is dropped. Either way it is
counted by reason, and logged once a minute per worker and reason.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

from nadird.common.errors import InvalidURL
from nadird.common.logs import PerKeyLimit, get_logger
from nadird.common.urls import canonicalize, domain_of, fingerprint
from nadird.job.link_rules import LinkFilter
from nadird.job.request import RequestSpec, unpack_wire
from nadird.job.spec import Job, LinkRules
from nadird.master.frontier.seen import SeenSet

log = get_logger()

# Reason -> what the log line says; the keys label nadird_rejected_links.
REASONS = {
    "fingerprint": "links whose fingerprint is not their URL's (admitted under the right one)",
    "canonical": "links not in canonical form (admitted canonicalized)",
    "invalid_url": "links that are no valid http(s) URL or request (dropped)",
    "scope": "links outside the job's link rules (dropped)",
}
LOG_INTERVAL = 60.0  # seconds between two lines for one worker and reason
MAX_FILTERS = 10_000  # (job, domain) link filters kept; past it they are built again

# The links of one page that passed: URLs, fingerprints, packed requests.
Checked = tuple[list[str], list[bytes], list[bytes | None]]


class LinkCheck:
    def __init__(self) -> None:
        self.rejected: Counter[str] = Counter()  # links, by REASONS key
        self._log = PerKeyLimit(LOG_INTERVAL)
        self._filters: dict[tuple[str, str], tuple[LinkRules, LinkFilter]] = {}

    def fresh(
        self,
        job: Job,
        page: tuple[str, str],
        links: tuple[Sequence[str], Sequence[bytes], Sequence[bytes | None]],
        claimed_fresh: list[bytes],
        seen: SeenSet,
    ) -> Checked:
        """Of one page's links, those whose claimed fingerprint the seen set
        lacks (`claimed_fresh`), checked: each under the master's own URL and
        fingerprint, unknown to the seen set under it, and within the job's
        rules. `page` is (the page's final URL, the worker that sent it)."""
        final_url, worker = page
        urls, fps, requests = links
        wanted = set(claimed_fresh)
        allowed = self._filter(job, final_url).allowed
        kept: Checked = ([], [], [])
        for url, fp, request in zip(urls, fps, requests, strict=True):
            if fp not in wanted:
                continue
            # Plain GETs (nearly every link) inline: this runs for every new link.
            try:
                canonical = canonicalize(url)
                own_fp = (
                    fingerprint(canonical) if request is None else _request_fp(canonical, request)
                )
            except (InvalidURL, ValueError, TypeError):
                self._reject("invalid_url", worker, url)
                continue
            # The rules judge the master's spelling: the one that is fetched.
            if not allowed(canonical):
                self._reject("scope", worker, url)
                continue
            if own_fp != fp:
                self._reject("canonical" if canonical != url else "fingerprint", worker, url)
                if own_fp in seen:
                    continue  # under its own fingerprint, a URL the seen set knows
            elif canonical != url:  # another spelling of the same request (a body's URL...)
                self._reject("canonical", worker, url)
            kept[0].append(canonical)
            kept[1].append(own_fp)
            kept[2].append(request)
        return kept

    def _filter(self, job: Job, final_url: str) -> LinkFilter:
        """The job's link rules as the worker applies them to this page: its
        scope judged from the page's own domain (it may have redirected)."""
        domain = domain_of(final_url)
        found = self._filters.get((job.name, domain))
        if found is not None and found[0] is job.links:
            return found[1]
        if len(self._filters) >= MAX_FILTERS:
            self._filters.clear()
        built = LinkFilter(job.links, domain)
        self._filters[(job.name, domain)] = (job.links, built)
        return built

    def _reject(self, reason: str, worker: str, url: str) -> None:
        self.rejected[reason] += 1
        suppressed = self._log.allow(f"{worker}\0{reason}", time.monotonic())
        if suppressed is not None:
            log.warning(
                "links_rejected",
                worker=worker,
                reason=REASONS[reason],
                example=url[:200],
                since_last=suppressed,
            )


def _request_fp(canonical: str, request: bytes) -> bytes:
    """The fingerprint of a link that is a request of its own (ValueError if malformed)."""
    return RequestSpec.from_wire(canonical, unpack_wire(request)).fingerprint()
