"""Hosts whose ETags do not work, so that revisits stop sending If-None-Match.

Some servers send a new ETag on every response (a per-response nonce in
it, or one computed over a page with a timestamp), others never answer an
If-None-Match with 304. Either way the ETag costs a full fetch every time,
and worse: If-None-Match decides over If-Modified-Since when both are sent
(RFC 9110, 13.2.2), so a working Last-Modified on the same host goes unused.

A failure is a revisit of a host that sent If-None-Match, got a full 200
and found the signature unchanged (what the user cares about did not
change, yet the server said the entity did). A success is a 304. A host with
`BROKEN_AFTER` failures and no success seen is marked broken: its
revisits keep If-Modified-Since (when the stored Last-Modified is a date)
but send no If-None-Match, and the master logs it once and counts it. One
304 ever seen keeps a host trusted: a host where some pages have working
ETags and some carry noise (a CSRF token changes the bytes, rightly a new
weak ETag) is not broken. The counters and both verdicts are kept in
frontier.db (etag_db.py), so a restart goes on where the last run stopped
instead of sending a broken If-None-Match BROKEN_AFTER more times per host.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

from nadird.common.logs import get_logger
from nadird.master.state.etag_db import BROKEN, COUNTING, TRUSTED, EtagHostTable

BROKEN_AFTER = 8  # failures with no 304 before a host's ETags are ignored

log = get_logger()


def host_of(url: str) -> str:
    return urlsplit(url).hostname or ""


class EtagHealth:
    def __init__(self, table: EtagHostTable | None = None) -> None:
        self._table = table  # None: kept in memory only
        self._failures: dict[str, int] = {}  # host -> failures, while no 304 was seen
        self._trusted: set[str] = set()  # hosts that answered a 304
        self.broken: set[str] = set()
        self.withheld = 0  # If-None-Match left out of bags (this run)
        for host, state, failures in table.load() if table is not None else ():
            if state == TRUSTED:
                self._trusted.add(host)
            elif state == BROKEN:
                self.broken.add(host)
            else:
                self._failures[host] = failures

    def _save(self, host: str, state: str, failures: int) -> None:
        if self._table is not None:
            self._table.put(host, state, failures)

    def observe(self, url: str, sent_etag: bool, status: int, unchanged: bool) -> None:
        """A revisit's answer: `sent_etag` when its bag carried an ETag."""
        if not sent_etag:
            return
        host = host_of(url)
        if status == 304:
            if host not in self._trusted:
                self._trusted.add(host)
                self._failures.pop(host, None)
                self._save(host, TRUSTED, 0)
            return
        if host in self._trusted or host in self.broken or status != 200 or not unchanged:
            return
        failures = self._failures.get(host, 0) + 1
        if failures < BROKEN_AFTER:
            self._failures[host] = failures
            self._save(host, COUNTING, failures)
            return
        del self._failures[host]
        self.broken.add(host)
        self._save(host, BROKEN, failures)
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
