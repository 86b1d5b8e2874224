"""structlog: one event per line with ts, level, event, role, node.

JSON lines when the stream is not a terminal (or `log_format: json`), a
human-readable line per event on a terminal (or `log_format: console`).

`node` is always the process that wrote the line; lines of the master about
one worker name it `worker`. The per-URL events (see docs/operations/logs.md) carry
`url`, `domain` and `lease` under those names in every role, so one URL,
lease or domain can be followed across processes with `jq`.

Per-URL lines are logged at debug on hot paths (the master handles thousands
of results a second): callers test `gate.debug` once per message and build no
event at all while debug is off.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Literal, Protocol, TextIO, cast

import structlog

LogFormat = Literal["auto", "json", "console"]
FORMATS: tuple[LogFormat, ...] = ("auto", "json", "console")

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


class Stream(Protocol):
    """Where lines go: a text file, or stderr shared with a progress line."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...

    def isatty(self) -> bool: ...


class Gate:
    """Which levels are on now: one attribute read instead of a log call."""

    debug = False
    info = True

    def set(self, level: str) -> None:
        self.debug = _LEVELS[level] <= logging.DEBUG
        self.info = _LEVELS[level] <= logging.INFO


gate = Gate()


def resolve_format(fmt: str, stream: Stream) -> Literal["json", "console"]:
    """`auto`: console on a terminal, JSON otherwise (files, pipes, journald)."""
    if fmt == "auto":
        return "console" if stream.isatty() else "json"
    return "console" if fmt == "console" else "json"


def configure(
    role: str,
    node: str,
    level: str = "info",
    stream: Stream | None = None,
    fmt: str = "auto",
) -> Literal["json", "console"]:
    """Set up logging for this process. Called once by the entry point, never
    on import. Returns the format chosen (`auto` resolved)."""
    out: Stream = stream or sys.stdout
    chosen = resolve_format(fmt, out)
    tail: list[Any]
    if chosen == "console":
        colors = out.isatty()
        # It formats tracebacks itself (format_exc_info would pre-empt it).
        tail = [structlog.dev.ConsoleRenderer(colors=colors, sort_keys=False, timestamp_key="ts")]
    else:
        tail = [
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(sort_keys=False),
        ]
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
            _static_fields(role, node),
            *tail,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        # WriteLogger writes a line and its newline in one write: print() makes
        # two, and lines of processes sharing one stderr (nadird crawl and its
        # workers) could then run together.
        logger_factory=structlog.WriteLoggerFactory(cast(TextIO, out)),
        cache_logger_on_first_use=False,
    )
    gate.set(level)
    return chosen


def set_level(level: str) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]))
    gate.set(level)


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
