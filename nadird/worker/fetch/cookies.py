"""Cookies within a crawl: what a site sets is sent back to it.

A worker keeps one jar per (job, registrable domain) and, for a job with a
login, per account too, so cookies never cross jobs, domains or accounts.
A jar takes cookies only from answers of hosts in its own domain (redirect
hops included) and sends them only there. It lives across the bags of its
(job, domain) this worker crawls, but it is a cache, not state: a worker
that restarts, or another worker, starts with an empty jar and the site sets
its cookies again. Bounded: at most `max_cookies` per jar (an answer that
would add more has its new ones dropped), none over MAX_COOKIE_BYTES, and
`max_jars` per worker (the least recently used jar goes).

The cookies a request names itself (its own, the job's, the login
session's) win over the jar's of the same name: the session the master
hands out is the one that counts.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

import aiohttp
from yarl import URL

from nadird.common.urls import registrable_domain
from nadird.config.fetch import CookieJarConfig

# Name and value: what RFC 6265 (6.1) asks a client to keep at least;
# a bigger one is dropped, so a jar's size stays bounded.
MAX_COOKIE_BYTES = 4096
# (name, domain, path): a cookie's identity; its value beside it.
_Entry = tuple[str, str, str, str]


class DomainJar:
    """The cookies of one job's domain (one account's, with a login)."""

    def __init__(self, domain: str, max_cookies: int) -> None:
        self.domain = domain
        self.max_cookies = max_cookies
        self.refused = 0  # answers whose new cookies were not kept (a full jar)
        # unsafe: hosts may be IP addresses (their domain is the address).
        self._jar = aiohttp.CookieJar(unsafe=True, quote_cookie=False)

    def __len__(self) -> int:
        return len(self._jar)

    def ours(self, url: URL) -> bool:
        return bool(url.host) and registrable_domain(url.host or "") == self.domain

    def cookies_for(self, url: URL) -> dict[str, str]:
        """What goes with a request to `url` (domain, path, secure, expiry)."""
        if not self.ours(url):
            return {}
        return {name: morsel.value for name, morsel in self._jar.filter_cookies(url).items()}

    def store(self, set_cookies: list[str], url: URL) -> bool:
        """Take an answer's Set-Cookie headers; whether anything changed."""
        if not set_cookies or not self.ours(url):
            return False
        before = self._entries()
        self._jar.update_cookies_from_headers(set_cookies, url)
        self._jar.clear(lambda m: len(m.key) + len(m.value) > MAX_COOKIE_BYTES)
        if len(self._jar) > self.max_cookies:
            kept = {entry[:3] for entry in before}
            self._jar.clear(lambda m: (m.key, m["domain"], m["path"]) not in kept)
            self.refused += 1
        return self._entries() != before

    def values(self) -> dict[str, str]:
        """Every cookie by name (the last of a name wins): a login's session."""
        return {name: value for name, _domain, _path, value in sorted(self._entries())}

    def _entries(self) -> set[_Entry]:
        return {(m.key, m["domain"], m["path"], m.value) for m in self._jar}


class CookieJars:
    """A worker's jars, by (job, domain, account), least recently used first."""

    def __init__(self, config: CookieJarConfig) -> None:
        self.config = config
        self._jars: OrderedDict[tuple[str, str, str], DomainJar] = OrderedDict()

    def __len__(self) -> int:
        return len(self._jars)

    def jar(self, job: str, domain: str, account: str = "") -> DomainJar:
        key = (job, domain, account)
        found = self._jars.get(key)
        if found is not None:
            self._jars.move_to_end(key)
            return found
        found = self._jars[key] = DomainJar(domain, self.config.max_cookies)
        while len(self._jars) > self.config.max_jars:
            self._jars.popitem(last=False)
        return found


def login_jar(url: str, config: CookieJarConfig) -> DomainJar:
    """A jar of its own for one login (its form's and its answer's cookies)."""
    return DomainJar(registrable_domain(URL(url).host or ""), config.max_cookies)


def cookie_header(jar: Mapping[str, str], header: str | None) -> str | None:
    """The Cookie header of a hop: the jar's cookies under the request's own
    `header` (nadird/job/request.py builds it `a=1; b=2`, values without ';')."""
    if not jar:
        return header
    own = dict(part.split("=", 1) for part in header.split("; ") if "=" in part) if header else {}
    merged = {**{k: v for k, v in jar.items() if k not in own}, **own}
    return "; ".join(f"{k}={v}" for k, v in merged.items())
