"""A worker's view of its own health: the link to its master and its work.

The link says in the log when the master has not been heard from (no
welcome, no answer to heartbeats) for `unreachable_after` seconds, again at
doubling intervals, and once more when it answers; systemd sees the same in
STATUS=. A name that does not resolve is said so in the warning. The same
state is served by the worker's own HTTP endpoint (nadird/worker/service/http.py).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections import Counter
from typing import Any

from nadird.common import systemd
from nadird.common.http_status import status_classes
from nadird.common.logs import get_logger
from nadird.protocol.messages import PageResult
from nadird.worker.service.master_probe import silence_hint

log = get_logger()
MAX_WARNING_INTERVAL = 300.0
RESOLVE_TIMEOUT = 5.0


class MasterLink:
    def __init__(self, endpoint: str, warn_after: float, curve: bool = False) -> None:
        self.endpoint = endpoint
        self.curve = curve  # this worker has CURVE keys (for the hint when unanswered)
        self.warn_after = warn_after
        self.registered = False
        self.last_heard = time.monotonic()
        self.warnings = 0  # master_unreachable lines since it was last heard
        self._interval = warn_after
        self._next_warning = self.last_heard + warn_after
        systemd.notify(f"STATUS=waiting for the master at {endpoint}")

    def heard(self, now: float) -> None:
        """Any message from the master."""
        self.last_heard = now
        self._interval = self.warn_after
        self._next_warning = now + self.warn_after

    def welcomed(self, now: float) -> None:
        if self.warnings:
            log.info("master_reachable", master=self.endpoint, warnings=self.warnings)
        self.warnings = 0
        self.registered = True
        self.heard(now)
        systemd.notify(f"STATUS=connected to the master at {self.endpoint}")

    def connected(self, now: float) -> bool:
        return self.registered and now - self.last_heard < self.warn_after

    def silent_for(self, now: float) -> float:
        return max(0.0, now - self.last_heard)

    def due(self, now: float) -> bool:
        """Whether a master_unreachable warning is due; the next one comes
        twice as long after (at most MAX_WARNING_INTERVAL)."""
        if now < self._next_warning:
            return False
        self._interval = min(self._interval * 2, MAX_WARNING_INTERVAL)
        self._next_warning = now + self._interval
        return True

    async def warn(self, now: float) -> None:
        self.warnings += 1
        silent = round(self.silent_for(now), 1)
        problem = await resolve_problem(self.endpoint)
        # Not registered, yet something listens there: a refused handshake, likely.
        hint = None if self.registered else await silence_hint(self.endpoint, self.curve)
        log.warning(
            "master_unreachable",
            master=self.endpoint,
            silent_s=silent,
            next_warning_s=round(self._next_warning - now, 1),
            registered=self.registered,
            **({"resolve_error": problem} if problem else {}),
            **({"hint": hint} if hint else {}),
        )
        systemd.notify(f"STATUS=no answer from the master at {self.endpoint} for {silent} s")


async def resolve_problem(endpoint: str) -> str | None:
    """Why the host of a tcp:// endpoint does not resolve; None if it does
    (or is an address, or the endpoint is not tcp://)."""
    scheme, _, rest = endpoint.partition("://")
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    if scheme != "tcp" or not host or host == "*":
        return None
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    loop = asyncio.get_running_loop()
    try:
        await asyncio.wait_for(
            loop.getaddrinfo(host, port or None, type=socket.SOCK_STREAM), RESOLVE_TIMEOUT
        )
    except TimeoutError:
        return f"resolving {host} took over {RESOLVE_TIMEOUT:g} s"
    except (OSError, UnicodeError) as exc:  # UnicodeError: not a valid host name
        return f"cannot resolve {host}: {getattr(exc, 'strerror', None) or exc}"
    return None


class WorkStats:
    """Pages fetched, their HTTP statuses and errors by kind (counted as the
    master counts them), since the worker started."""

    def __init__(self) -> None:
        self.pages = 0
        self.statuses: Counter[int] = Counter()
        self.errors: Counter[str] = Counter()

    def page(self, page: PageResult) -> None:
        self.pages += 1
        if page.status:
            self.statuses[page.status] += 1
        kind = page.error_kind
        if kind is not None:
            self.errors[kind.value] += 1


def health(
    node: str,
    link: MasterLink,
    stats: WorkStats,
    bags: int,
    proxies: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What /healthz shows (and /metrics exports); `proxies` is the pool's
    description when the worker uses proxies."""
    now = time.monotonic()
    connected = link.connected(now)
    return {
        "ok": connected,
        "node": node,
        "master": link.endpoint,
        "connected": connected,
        "registered": link.registered,
        "master_silent_s": round(link.silent_for(now), 3),
        "bags_in_flight": bags,
        "pages_fetched": stats.pages,
        "statuses": status_classes(dict(stats.statuses)),
        "errors": dict(sorted(stats.errors.items())),
        **({"proxy_pool": proxies} if proxies is not None else {}),
    }
