"""Which failed fetches are worth another try, and when."""

from __future__ import annotations

import random

from nadird.protocol.messages import PageResult

# Which error kinds may go away by themselves is the kind's own property
# (ErrorKind.transient); these are the answers worth another try.
TRANSIENT_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


def is_transient(page: PageResult) -> bool:
    if page.error_kind is not None:
        return page.error_kind.transient
    return page.status in TRANSIENT_STATUSES or 520 <= page.status <= 599


def describe(page: PageResult) -> str:
    return page.error if page.error is not None else f"http: status {page.status}"


def backoff(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Exponential back-off with jitter: attempt 1 waits about `base` seconds."""
    delay = min(cap, base * 2 ** max(0, attempt - 1))
    jitter = (rng or random).uniform(0.5, 1.0)
    return float(delay * jitter)
