"""Outgoing proxies used in turn, with failing ones rested for a while.

A proxy that fails `max_failures` times in a row (connect errors, timeouts,
refused CONNECTs) is skipped for `cooldown` seconds. When every proxy is
resting the one that comes back first is used anyway: a worker told to use
proxies never falls back to connecting directly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from nadird.config import ProxyConfig


@dataclass
class Proxy:
    url: str
    failures: int = 0
    resting_until: float = 0.0
    used: int = 0

    @property
    def socks(self) -> bool:
        return self.url.lower().startswith("socks")


class ProxyPool:
    def __init__(self, config: ProxyConfig) -> None:
        self._config = config
        self.proxies = [Proxy(url) for url in config.urls]
        self._next = 0

    def __bool__(self) -> bool:
        return bool(self.proxies)

    def pick(self) -> Proxy | None:
        if not self.proxies:
            return None
        now = time.monotonic()
        count = len(self.proxies)
        for offset in range(count):
            proxy = self.proxies[(self._next + offset) % count]
            if proxy.resting_until <= now:
                self._next = (self._next + offset + 1) % count
                proxy.used += 1
                return proxy
        proxy = min(self.proxies, key=lambda p: p.resting_until)
        proxy.used += 1
        return proxy

    def succeeded(self, proxy: Proxy) -> None:
        proxy.failures = 0

    def failed(self, proxy: Proxy) -> None:
        proxy.failures += 1
        if proxy.failures >= self._config.max_failures:
            proxy.resting_until = time.monotonic() + self._config.cooldown
            proxy.failures = 0
