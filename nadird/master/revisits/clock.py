"""The wall clock of the revisit schedule, which a test may shift.

Cron slots have minute resolution and a downtime lasts as long as it lasts,
so "just before 09:00 in Shanghai" or "the master was down for an hour"
cannot be waited for in a test. NADIRD_REVISIT_CLOCK_OFFSET (seconds,
possibly negative) is added to the system clock wherever the schedule reads
the time: due times, the scan's "now", the last fetch it stores, `expire`.
Nothing else moves: leases, politeness and the store's fetch times keep the
system clock. Unset (the normal case) the schedule reads time.time itself.

NADIRD_REVISIT_CLOCK_START (a Unix time) sets the offset instead so that the
schedule's clock reads that time when the master builds it, once its state
is loaded: "ten seconds before 09:00" then means ten seconds after the start,
however long starting took on a loaded machine. The offset is logged
(revisit_clock_shifted) for the test to find the slot on the system clock.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping

from nadird.common.errors import ConfigError
from nadird.common.logs import get_logger

OFFSET_ENV = "NADIRD_REVISIT_CLOCK_OFFSET"
START_ENV = "NADIRD_REVISIT_CLOCK_START"

log = get_logger()


def revisit_wall(environ: Mapping[str, str] = os.environ) -> Callable[[], float]:
    """time.time, shifted by the environment's offset when it sets one."""
    offset = _seconds(environ, OFFSET_ENV)
    start = _seconds(environ, START_ENV)
    if offset is not None and start is not None:
        raise ConfigError("(environment)", START_ENV, f"expected it or {OFFSET_ENV}, not both")
    if start is not None:
        offset = start - time.time()
    if offset is None:
        return time.time
    log.info("revisit_clock_shifted", offset=offset)
    shift = offset

    def shifted() -> float:
        return time.time() + shift

    return shifted


def _seconds(environ: Mapping[str, str], name: str) -> float | None:
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ConfigError("(environment)", name, f"expected seconds, got {raw!r}")
    return value
