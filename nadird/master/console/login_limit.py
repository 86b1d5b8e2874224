"""A limit on wrong tokens at the console's sign-in, per client address.

Each address keeps the times of its last `failures` wrong tokens. With that
many inside `window` seconds, the address is refused (429) until the oldest
of them is `window` old: a sliding window, so that waiting out the
Retry-After always lets one more try through, never a fresh burst. A right
token clears the address. IPv6 clients are counted by /64, the block one
host usually gets, or one machine could try 2^64 times.

Memory is bounded: at most `clients` addresses are kept, the one that failed
least recently going first. An attacker with more addresses than that can
push its own records out, but then it has more addresses than the limit
could hold back anyway; the limit is for one address guessing.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

Clock = Callable[[], float]


def client_key(peer: str | None) -> str:
    """The address a failure counts against: IPv4 as it is, IPv6 by /64."""
    if not peer:
        return "(unknown)"
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return peer  # a Unix socket path or the like: as it is
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d is an IPv4 client
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


@dataclass
class LimitCounts:
    """Since start, for /metrics."""

    failures: int = 0  # wrong tokens
    refused: int = 0  # attempts answered 429 without looking at the token
    evicted: int = 0  # addresses forgotten to stay within `clients`


@dataclass
class LoginLimit:
    failures: int
    window: float
    clients: int
    clock: Clock = time.monotonic
    counts: LimitCounts = field(default_factory=LimitCounts)
    _failed: OrderedDict[str, deque[float]] = field(default_factory=OrderedDict)

    def __len__(self) -> int:
        return len(self._failed)

    def retry_after(self, peer: str | None) -> float | None:
        """Seconds until this address may try again; None if it may now."""
        key = client_key(peer)
        times = self._failed.get(key)
        if times is None or len(times) < self.failures:
            return None
        wait = times[0] + self.window - self.clock()
        if wait <= 0:
            return None
        self.counts.refused += 1
        return wait

    def failed(self, peer: str | None) -> int:
        """Record a wrong token; how many this address has inside the window."""
        key = client_key(peer)
        now = self.clock()
        times = self._failed.pop(key, None)
        if times is None:
            times = deque(maxlen=self.failures)
        times.append(now)
        self._failed[key] = times  # the most recent failure last
        self.counts.failures += 1
        while len(self._failed) > self.clients:
            self._failed.popitem(last=False)
            self.counts.evicted += 1
        return sum(1 for at in times if now - at < self.window)

    def succeeded(self, peer: str | None) -> None:
        self._failed.pop(client_key(peer), None)


class LimitCollector(Collector):
    """The limit's counts, read at scrape time (/metrics)."""

    def __init__(self, limit: LoginLimit) -> None:
        self._limit = limit

    def collect(self) -> Iterator[Metric]:
        counts = self._limit.counts
        yield CounterMetricFamily(
            "nadird_console_login_failures",
            "Console sign-ins refused for a wrong token",
            value=counts.failures,
        )
        yield CounterMetricFamily(
            "nadird_console_login_limited",
            "Console sign-ins answered 429: too many wrong tokens from the address",
            value=counts.refused,
        )
        yield CounterMetricFamily(
            "nadird_console_login_evicted",
            "Addresses the sign-in limit forgot to stay within console.login_clients",
            value=counts.evicted,
        )
        yield GaugeMetricFamily(
            "nadird_console_login_clients",
            "Addresses with wrong tokens the sign-in limit remembers",
            value=len(self._limit),
        )
