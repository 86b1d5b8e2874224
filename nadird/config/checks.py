"""Range checks shared by the config sections' __post_init__, and the one
check every number in a config file gets before any section sees it."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlsplit

from nadird.revisit.durations import parse_duration


def positive(obj: object, *names: str) -> None:
    for name in names:
        if getattr(obj, name) <= 0:
            raise ValueError(f"{name} must be > 0")


def not_negative(obj: object, *names: str) -> None:
    for name in names:
        if getattr(obj, name) < 0:
            raise ValueError(f"{name} must be >= 0")


def non_finite(data: Any, path: str = "") -> tuple[str, float] | None:
    """The first NaN or infinity in a tree of YAML data, with its dotted path.

    Checked on the raw tree, before any section is built: NaN compares false
    with everything, so `delay: .nan` would pass every `< 0` range check and
    act as no delay at all, and `.inf` would wait forever. Walking the tree
    covers every float key, present and future, in one place.
    """
    if isinstance(data, float):
        return None if math.isfinite(data) else (path or "(top level)", data)
    if isinstance(data, dict):
        items: Any = ((f"{path}.{k}" if path else str(k), v) for k, v in data.items())
    elif isinstance(data, list):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(data))
    else:
        return None
    for sub_path, value in items:
        found = non_finite(value, sub_path)
        if found is not None:
            return found
    return None


def seconds(name: str, value: str | float) -> float:
    """A duration key (90s, 5m, 1h30m or plain seconds); the error names it."""
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def check_http_url(url: str) -> None:
    """Raise ValueError unless `url` is an http(s) URL with a host and a valid port."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        raise ValueError(f"url does not parse: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("url must be an http:// or https:// URL with a host")
