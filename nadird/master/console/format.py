"""How the console writes numbers, times and crawled text (Jinja filters,
and the hook every printed value goes through)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from markupsafe import Markup

from nadird.common.visible import visible_bidi


def number(value: Any) -> str:
    """1234567 as 1,234,567; None as a dash."""
    if value is None:
        return "—"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def measure(value: float | None) -> str:
    """An alert's measure or threshold: a rate of 0.033 as 0.033, not 0.0."""
    if value is None or abs(value) >= 1000 or float(value).is_integer():
        return number(value)
    return f"{round(value, 3):g}"


def seconds(value: float | None) -> str:
    """A duration: 42 s, 3 m 5 s, 2 h 10 m, 3 d 4 h; None as a dash."""
    if value is None:
        return "—"
    total = max(0, round(value))
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} m {secs} s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} m"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"


def latency(value: float | None) -> str:
    """A discovery latency: tenths of a second under a minute (articles of a
    feed come within seconds, where `seconds` would say 0 s or 1 s)."""
    if value is None:
        return "—"
    return f"{value:.1f} s" if value < 60 else seconds(value)


def wall(value: float | None) -> str:
    """A wall-clock time in UTC, to the second."""
    if value is None:
        return "—"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(value)) + " UTC"


def eta(queued: int, per_second: float) -> float | None:
    """Seconds until the queue is empty at the current rate; None while no
    rate is known (nothing stored lately)."""
    if queued <= 0:
        return 0.0
    if per_second <= 0:
        return None
    return queued / per_second


def value(data: Any, limit: int = 200) -> str:
    """A field's value as JSON, cut to `limit` characters."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(data: Any) -> Any:
    """Every value a template prints, before it is escaped (the Jinja
    environment's `finalize`): text has its bidi controls made visible, so
    no value from a page, a worker or a URL reorders the page around it.
    Markup (catalog strings with their parameters) is rewritten the same
    way: the catalog holds no bidi controls of its own."""
    if isinstance(data, Markup):
        return Markup(visible_bidi(str(data)))
    if isinstance(data, str):
        return visible_bidi(data)
    return data


FILTERS: dict[str, Callable[..., str]] = {
    "number": number,
    "measure": measure,
    "seconds": seconds,
    "latency": latency,
    "wall": wall,
    "value": value,
}
