"""A state load made slow on purpose, for tests of a master that starts slowly.

A master restored with millions of URLs spends a while reading its state
before it answers anyone; a test cannot afford such a state.
NADIRD_STATE_LOAD_DELAY (seconds) in a master's environment makes the load
of its seen set take that much longer, blocking as a large read would.
Unset (the normal case) nothing waits.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping

from nadird.common.errors import ConfigError

DELAY_ENV = "NADIRD_STATE_LOAD_DELAY"


def load_delay(environ: Mapping[str, str] = os.environ) -> float:
    """The seconds the environment asks the load to last longer (0: none)."""
    raw = environ.get(DELAY_ENV, "").strip()
    if not raw:
        return 0.0
    try:
        delay = float(raw)
    except ValueError:
        delay = math.nan
    if not (math.isfinite(delay) and delay >= 0):
        raise ConfigError("(environment)", DELAY_ENV, f"expected seconds >= 0, got {raw!r}")
    return delay


def slow_load(environ: Mapping[str, str] = os.environ) -> None:
    """Block for the environment's delay (the whole process, as a large read)."""
    delay = load_delay(environ)
    if delay:
        time.sleep(delay)
