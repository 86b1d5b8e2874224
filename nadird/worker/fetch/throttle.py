"""Per-domain pace: how long to wait between two request starts to a domain.

effective delay = max(job/politeness delay,
                      robots Crawl-delay (capped),
                      adaptive delay (capped))  + random jitter

The adaptive delay works like Scrapy's AutoThrottle: with latency L and a
target of C requests in flight, a delay of L / C keeps C requests busy on
the server on average; each response moves the delay half way there. Server
errors and timeouts double it instead (never a reason to speed up).

The state of a domain lives on the worker for as long as it keeps seeing the
domain (an LRU), so consecutive bags of one domain on one worker continue
where the last one stopped; across workers the pace is carried by the
master, which holds the domain back for BagDone.wait seconds.

A start counts from when the request really left, not from when its turn was
planned: a lane the event loop wakes late, or a request that spends time
connecting before its headers go out, would otherwise bring the next request
closer to it than the delay (seen on a loaded machine: 0.2 s turned into
0.1 s at the server). So turns are taken one at a time and booked when they
happen, and the fetcher's trace hook (`pacing_trace`) moves the booking to
the moment the headers are written.
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import email.utils
import random
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import aiohttp

from nadird.config import ThrottleConfig


@dataclass
class DomainPace:
    """What this worker has learnt of one domain's pace."""

    adaptive: float
    crawl_delay: float = 0.0  # robots.txt's, already capped; the largest of the domain's hosts
    throttled: int = 0  # 429/503 answers in a row (exponential back-off exponent)
    # Wall-clock deadline of a 429/503 rest, kept here so a later bag on this
    # worker waits too even if the master handed the domain out early.
    resting_until: float = 0.0


class DomainPaces:
    """Bounded map domain -> DomainPace, least recently used dropped first."""

    def __init__(self, config: ThrottleConfig) -> None:
        self.config = config
        self._states: OrderedDict[str, DomainPace] = OrderedDict()

    def get(self, domain: str) -> DomainPace:
        state = self._states.get(domain)
        if state is None:
            state = self._states[domain] = DomainPace(adaptive=self.config.start_delay)
            if len(self._states) > self.config.max_domains:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(domain)
        return state


class Pacer:
    """Spaces the request starts of one bag, across all its lanes."""

    def __init__(
        self,
        min_delay: float,
        state: DomainPace | None = None,
        config: ThrottleConfig | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.min_delay = min_delay
        self.config = config or ThrottleConfig(adaptive=False)
        self.state = state or DomainPace(adaptive=0.0)
        self._rng = rng or random.Random()
        self._last_start: float | None = None
        self._hold_until = time.monotonic() + max(0.0, self.state.resting_until - time.time())
        # Lanes take turns one by one, each seeing when the last one really went.
        self._turns = asyncio.Lock()

    def delay(self) -> float:
        """The effective delay now (jitter excluded)."""
        cfg = self.config
        adaptive = min(self.state.adaptive, cfg.max_delay) if cfg.adaptive else 0.0
        return max(self.min_delay, self.state.crawl_delay, adaptive)

    def _next_allowed(self) -> float:
        # Computed from the delay as it is NOW, not when the last start was
        # booked: a Crawl-delay learned from robots.txt applies at once.
        after_last = -1.0 if self._last_start is None else self._last_start + self.delay()
        return max(after_last, self._hold_until)

    async def turn(self) -> None:
        """Wait until a request to the domain may start, and book it as started."""
        async with self._turns:
            jitter = self.config.jitter
            extra = 0.0
            if jitter > 0 and self._last_start is not None:
                extra = self._rng.uniform(0.0, jitter * self.delay())
            # Again after each sleep: the last request may have gone out later
            # than booked (sent()), or a Crawl-delay been learnt meanwhile.
            while (wait := self._next_allowed() + extra - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            self._last_start = time.monotonic()
        _paced.set(self)

    def sent(self, when: float) -> None:
        """The request of the last turn went out at `when` (monotonic): the
        next one is spaced from then, never from earlier."""
        if self._last_start is not None and when > self._last_start:
            self._last_start = when

    def rest(self) -> float:
        """Seconds the domain must still rest after this bag."""
        if self._last_start is None:
            return max(0.0, self._hold_until - time.monotonic())
        return max(0.0, self._next_allowed() - time.monotonic())

    def observe(self, latency: float, failed: bool) -> None:
        """Adapt the delay to one response's latency (or failure)."""
        cfg = self.config
        if not cfg.adaptive:
            return
        state = self.state
        if failed:
            state.adaptive = min(cfg.max_delay, max(2 * state.adaptive, latency, 0.1))
            return
        target = latency / cfg.target_concurrency
        state.adaptive = min(cfg.max_delay, (state.adaptive + target) / 2)

    def hold(self, seconds: float) -> None:
        """No request to the domain for `seconds` from now (429/503, robots 5xx)."""
        self._hold_until = max(self._hold_until, time.monotonic() + seconds)
        self.state.resting_until = max(self.state.resting_until, time.time() + seconds)

    def throttled(self, retry_after: float | None) -> float:
        """The domain answered 429/503: how long it rests, and hold it that long."""
        cfg = self.config
        if retry_after is not None and retry_after > 0:
            wait = min(retry_after, cfg.max_retry_after)
        else:
            wait = min(cfg.backoff_base * 2**self.state.throttled, cfg.max_retry_after)
        self.state.throttled += 1
        self.hold(wait)
        return wait

    def served(self) -> None:
        """A normal answer: the back-off starts over."""
        self.state.throttled = 0


# The pacer whose turn this task took last: the request the task sends next
# is the one that turn was for. A task-local, so each lane marks its own.
_paced: contextvars.ContextVar[Pacer | None] = contextvars.ContextVar("paced", default=None)


async def _headers_sent(session: aiohttp.ClientSession, context: Any, params: Any) -> None:
    pacer = _paced.get()
    if pacer is not None:
        pacer.sent(time.monotonic())


def pacing_trace() -> aiohttp.TraceConfig:
    """A trace for the fetch session: a request's start is booked again when
    its headers are written (after any connect), see Pacer.sent."""
    trace = aiohttp.TraceConfig()
    trace.on_request_headers_sent.append(_headers_sent)
    return trace


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After value: delta-seconds or an HTTP date; None if unusable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # HTTP dates are GMT ('-0000' parses as naive)
        when = when.replace(tzinfo=datetime.UTC)
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)
