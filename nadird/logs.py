"""structlog JSON lines: one object per line with ts, level, event, role, node."""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def configure(role: str, node: str, level: str = "info", stream: TextIO | None = None) -> None:
    """Set up logging for this process. Called once by the entry point, never on import."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
            _static_fields(role, node),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(sort_keys=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(stream or sys.stdout),
        cache_logger_on_first_use=False,
    )


def set_level(level: str) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]))


def _static_fields(role: str, node: str) -> Any:
    def add(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
        event.setdefault("role", role)
        event.setdefault("node", node)
        return event

    return add


def get_logger(**bound: Any) -> Any:
    return structlog.get_logger(**bound)


class PerKeyLimit:
    """At most one log line per key per interval, counting what it held back
    (a flood from one peer must not flood the log)."""

    def __init__(self, interval: float = 1.0, max_keys: int = 10_000) -> None:
        self._interval = interval
        self._max_keys = max_keys
        self._last: dict[str, tuple[float, int]] = {}

    def allow(self, key: str, now: float) -> int | None:
        """None to stay quiet; else how many were held back since the last line."""
        last, suppressed = self._last.get(key, (float("-inf"), 0))
        if now - last < self._interval:
            self._last[key] = (last, suppressed + 1)
            return None
        if len(self._last) >= self._max_keys:
            self._last.clear()  # bounded memory; at worst one extra line per key
        self._last[key] = (now, 0)
        return suppressed
