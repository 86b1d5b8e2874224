"""What the URL page shows of a page's versions: the values of each
version, the words a text field changed (difflib), and the numeric fields
as chart columns.

Everything here is data: (operation, text) pieces and numbers, which the
templates print escaped like any other value. No HTML is made from a page.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from nadird.store.history import Version

# A text longer than this (in words and spaces) is not diffed word by word:
# SequenceMatcher is quadratic at worst, and such a field is shown old/new.
MAX_DIFF_TOKENS = 3000
MAX_SHOWN = 2000  # characters of a value shown in a version's table
_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")
# A number as pages write it: "1,299.00", "12.5 EUR", "$3", "-4"; a currency
# sign or a unit of a few letters around it.
_NUMBER = re.compile(
    r"\s*[^\d\s.,+-]{0,3}\s*([+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*[^\d\s]{0,4}\s*"
)
Op = Literal["same", "del", "ins"]


@dataclass(frozen=True)
class FieldView:
    name: str
    shown: str  # the value, as JSON or as the text itself, cut to MAX_SHOWN
    changed: bool  # differs from the version before
    pieces: list[tuple[Op, str]] | None  # the words changed, for a text (not a number) that did
    old: str | None  # the value before, when it changed and is not diffed


@dataclass(frozen=True)
class VersionView:
    fetched_at: float
    reextract: bool
    first: bool  # the page's first version: nothing before it
    fields: list[FieldView]


def as_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def word_diff(old: str, new: str) -> list[tuple[Op, str]] | None:
    """The pieces of `new` and `old`: kept, deleted, inserted words; None
    when either is too long to diff."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    if len(a) > MAX_DIFF_TOKENS or len(b) > MAX_DIFF_TOKENS:
        return None
    pieces: list[tuple[Op, str]] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pieces.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            pieces.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            pieces.append(("ins", "".join(b[j1:j2])))
    return pieces


def _field(name: str, value: Any, before: dict[str, Any] | None) -> FieldView:
    if before is None or before.get(name) == value:
        return FieldView(name, as_text(value), False, None, None)
    old = before.get(name)
    numeric = number_of(old) is not None and number_of(value) is not None
    if isinstance(old, str) and isinstance(value, str) and not numeric:
        pieces = word_diff(old, value)
        if pieces is not None:
            return FieldView(name, as_text(value), True, pieces, None)
    return FieldView(name, as_text(value), True, None, as_text(old))


def version_views(versions: Sequence[Version], shown: int, last_page: bool) -> list[VersionView]:
    """The first `shown` of `versions` (newest first), each compared with
    the next one in the list (the version before it); the last shown of the
    last page is the page's first version."""
    views = []
    for index, v in enumerate(versions[:shown]):
        before = versions[index + 1].data if index + 1 < len(versions) else None
        names = list(v.data) + [n for n in (before or {}) if n not in v.data]
        fields = [_field(name, v.data.get(name), before) for name in names]
        views.append(VersionView(v.fetched_at, v.reextract, before is None and last_page, fields))
    return views


def number_of(value: Any) -> float | None:
    """A value as a number, if it is one or a text that writes one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and len(value) < 40:
        try:  # the common case, a plain number ("12.50"), without the pattern
            plain = float(value)
        except ValueError:
            plain = None
        if plain is not None:
            return plain if math.isfinite(plain) else None
        found = _NUMBER.fullmatch(value)
        if found is not None:
            return float(found.group(1).replace(",", ""))
    return None


def numeric_columns(versions: Sequence[Version]) -> dict[str, Any]:
    """The fields that hold a number in every version that has them, as
    chart columns over the versions' times (oldest first): {"time": [...],
    "columns": {field: [...]}}."""
    ordered = sorted(versions, key=lambda v: v.fetched_at)
    names = {name for v in ordered for name in v.data}
    columns: dict[str, list[float | None]] = {}
    for name in sorted(names):
        numbers: list[float | None] = []
        for v in ordered:
            value = v.data.get(name)
            number = number_of(value)
            if number is None and value is not None:
                break  # a value that is no number: not a numeric field
            numbers.append(number)
        else:
            if any(n is not None for n in numbers):
                columns[name] = numbers
    return {"time": [round(v.fetched_at, 3) for v in ordered], "columns": columns}
