"""Durations as people write them in a config file: 90s, 5m, 6h, 14d, 2w, 1h30m.

A plain number (int, float, or a numeric string) is seconds. Units run from
the largest to the smallest and each appears at most once, so `1h30m` reads
one way only; `m` is always minutes (there are no months: they have no fixed
length). Every value comes back as float seconds.
"""

from __future__ import annotations

import math
import re

UNIT_SECONDS = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_UNIT_ORDER = "wdhms"
_PART = re.compile(r"(\d+(?:\.\d+)?)([wdhms])")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
EXAMPLE = "a duration like 90s, 5m, 6h, 14d or 1h30m"


def _parse_text(text: str, original: object) -> float:
    if _NUMBER.fullmatch(text):
        return float(text)
    total = 0.0
    position = 0
    last_rank = -1
    for part in _PART.finditer(text):
        rank = _UNIT_ORDER.index(part.group(2))
        if part.start() != position or rank <= last_rank:
            break
        total += float(part.group(1)) * UNIT_SECONDS[part.group(2)]
        position = part.end()
        last_rank = rank
    if position == 0 or position != len(text):
        raise ValueError(f"expected {EXAMPLE}, got {original!r}")
    return total


def parse_duration(value: object, *, allow_zero: bool = False) -> float:
    """Seconds in `value`; ValueError saying what was expected otherwise.

    Zero is refused unless `allow_zero` (an interval of 0 would fetch in a
    loop); negative and non-finite values are always refused.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected {EXAMPLE}, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        seconds = _parse_text(value.strip(), value)
    else:
        raise ValueError(f"expected {EXAMPLE}, got {type(value).__name__} {value!r:.60}")
    if not math.isfinite(seconds):
        raise ValueError(f"expected a finite duration, got {value!r}")
    if seconds < 0:
        raise ValueError(f"expected a duration >= 0, got {value!r}")
    if seconds == 0 and not allow_zero:
        raise ValueError(f"expected a duration > 0, got {value!r}")
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest exact spelling in whole units (5400 -> '1h30m'); for messages."""
    if seconds < 1 or seconds != int(seconds):
        return f"{seconds:g}s"
    rest = int(seconds)
    parts = []
    for unit in _UNIT_ORDER:
        size = int(UNIT_SECONDS[unit])
        if rest >= size:
            parts.append(f"{rest // size}{unit}")
            rest %= size
    return "".join(parts)
