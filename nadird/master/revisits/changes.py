"""Change alerts, pure: which watched fields of a revisited page changed, and
whether a change meets a rule's condition.

The master keeps the last values of the watched fields in the page's revisit
row (nadird/master/state/revisit_db.py), so the comparison needs no store
read and survives a restart; `watched_changes` is what a fetch does to them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nadird.config.alerts import ChangeCondition

# Answers whose extracted data describes the page (a 404's empty data would
# look like every field changed to nothing).
_DESCRIBES_PAGE = range(200, 300)


@dataclass(frozen=True, slots=True)
class FieldChange:
    """A watched field of a page that has a new value, once the fetch is durable."""

    url: str
    job: str
    field: str
    old: Any
    new: Any


def watched_changes(
    url: str,
    job: str,
    fields: Sequence[str],
    before: Mapping[str, Any] | None,
    status: int,
    data: Mapping[str, Any],
) -> tuple[dict[str, Any] | None, list[FieldChange]]:
    """The values to keep for the page's watched `fields`, and the fields
    whose value differs from `before` (None: not kept yet; nothing changed).
    A page that did not answer 2xx keeps `before`."""
    if not fields:
        return None, []
    if status not in _DESCRIBES_PAGE:
        return (dict(before) if before is not None else None), []
    now = {name: data.get(name) for name in fields}
    if before is None:
        return now, []
    changed = [
        FieldChange(url, job, name, before[name], now[name])
        for name in fields
        if name in before and before[name] != now[name]
    ]
    return now, changed


def as_number(value: Any) -> float | None:
    """A finite number from a processed value (int, float) or a string that
    parses as one; None for anything else (booleans, lists, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def meets(condition: ChangeCondition, old: Any, new: Any) -> bool | None:
    """Whether a change from `old` to `new` fires; None when the condition is
    numeric and a value it needs is not a number."""
    kind, limit = condition.kind, condition.limit
    if kind == "any":
        return bool(old != new)
    after = as_number(new)
    if after is None:
        return None
    if kind == "below":
        return after < limit
    if kind == "above":
        return after > limit
    before = as_number(old)
    if before is None:
        return None
    if before <= 0:
        return False  # a percentage of nothing (or of a negative) means nothing
    percent = (after - before) / before * 100.0
    return -percent > limit if kind == "drop_percent" else percent > limit
