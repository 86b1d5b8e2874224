"""The wall clock of the revisit schedule, which a test may shift.

Cron slots have minute resolution and a downtime lasts as long as it lasts,
so "just before 09:00 in Shanghai" or "the master was down for an hour"
cannot be waited for in a test. NADIRD_REVISIT_CLOCK_OFFSET (seconds,
possibly negative) is added to the system clock wherever the schedule reads
the time: due times, the scan's "now", the last fetch it stores, `expire`.
Nothing else moves: leases, politeness and the store's fetch times keep the
system clock. Unset (the normal case) the schedule reads time.time itself.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping

from nadird.common.errors import ConfigError

OFFSET_ENV = "NADIRD_REVISIT_CLOCK_OFFSET"


def revisit_wall(environ: Mapping[str, str] = os.environ) -> Callable[[], float]:
    """time.time, shifted by the environment's offset when it sets one."""
    raw = environ.get(OFFSET_ENV, "").strip()
    if not raw:
        return time.time
    try:
        offset = float(raw)
    except ValueError:
        offset = math.nan
    if not math.isfinite(offset):
        raise ConfigError("(environment)", OFFSET_ENV, f"expected seconds, got {raw!r}")

    def shifted() -> float:
        return time.time() + offset

    return shifted
