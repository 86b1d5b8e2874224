"""Hosts whose ETags do not work, so that revisits stop sending If-None-Match.

Some servers send a new ETag on every response (a per-response nonce in
it, or one computed over a page with a timestamp), others never answer an
If-None-Match with 304. Either way the ETag costs a full fetch every time,
and worse: If-None-Match decides over If-Modified-Since when both are sent
(RFC 9110, 13.2.2), so a working Last-Modified on the same host goes unused.

A failure is a revisit of a host that sent If-None-Match, got a full 200
and found the signature unchanged (what the user cares about did not
change, yet the server said the entity did). A success is a 304. A host with
`BROKEN_AFTER` failures and no success in this run is marked broken: its
revisits keep If-Modified-Since (when the stored Last-Modified is a date)
but send no If-None-Match, and the master logs it once and counts it. One
304 ever seen keeps a host trusted: a host where some pages have working
ETags and some carry noise (a CSRF token changes the bytes, rightly a new
weak ETag) is not broken. The counters live in memory (a restart learns again).
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

from nadird.logs import get_logger

BROKEN_AFTER = 8  # failures with no 304 before a host's ETags are ignored

log = get_logger()


def host_of(url: str) -> str:
    return urlsplit(url).hostname or ""


class EtagHealth:
    def __init__(self) -> None:
        self._failures: dict[str, int] = {}  # host -> failures, while no 304 was seen
        self._trusted: set[str] = set()  # hosts that answered a 304
        self.broken: set[str] = set()
        self.withheld = 0  # If-None-Match left out of bags (this run)

    def observe(self, url: str, sent_etag: bool, status: int, unchanged: bool) -> None:
        """A revisit's answer: `sent_etag` when its bag carried an ETag."""
        if not sent_etag:
            return
        host = host_of(url)
        if status == 304:
            self._trusted.add(host)
            self._failures.pop(host, None)
            return
        if host in self._trusted or host in self.broken or status != 200 or not unchanged:
            return
        failures = self._failures.get(host, 0) + 1
        if failures < BROKEN_AFTER:
            self._failures[host] = failures
            return
        del self._failures[host]
        self.broken.add(host)
        log.warning(
            "etag_ignored",
            host=host,
            failures=failures,
            reason="full answers with the content unchanged and never a 304: "
            "If-None-Match is no longer sent to this host",
        )

    def sendable(self, url: str) -> bool:
        """Whether a bag may carry the ETag of `url`."""
        return host_of(url) not in self.broken

    def hosts(self) -> Iterator[str]:
        return iter(sorted(self.broken))
