"""Progress of `nadird crawl`: a live line on a terminal, JSON events otherwise.

On a terminal the progress line and the log lines share stderr (Console): a
log line first wipes the progress line, and the progress line is drawn again
under it, so no log line is ever glued onto it. The counts are the ones the
summary reports: pages stored without an error, pages stored with one.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from nadird.common.logs import get_logger

log = get_logger()
CLEAR_LINE = "\r\x1b[K"  # to column 0, erase to the end of the line


class Console:
    """A text stream (stderr) with an optional live line at the bottom."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._line: str | None = None  # the live line, while there is one
        self._shown = False  # the cursor is at the end of the live line

    def isatty(self) -> bool:
        return self._stream.isatty()

    def write(self, text: str) -> int:
        if self._shown:
            self._stream.write(CLEAR_LINE)
            self._shown = False
        written = self._stream.write(text)
        if self._line is not None and text.endswith("\n"):
            self._stream.write(self._line)
            self._shown = True
        return written

    def flush(self) -> None:
        self._stream.flush()

    def show(self, line: str) -> None:
        """Draw (or redraw) the live line."""
        self._line = line
        self._stream.write(CLEAR_LINE + line if self._shown else line)
        self._shown = True
        self._stream.flush()

    def end(self) -> None:
        """Leave the live line where it is and go on below it."""
        if self._shown:
            self._stream.write("\n")
            self._stream.flush()
        self._line = None
        self._shown = False


def counts(status: dict[str, Any]) -> dict[str, Any]:
    """What the progress line and event say, from the master's full status."""
    return {
        "pages": status.get("pages_ok", 0),
        # URLs whose retries ran out are not stored but failed all the same.
        "errors": status.get("pages_error", 0) + status.get("dead_letters", 0),
        "queued": status["queued"],
        "pages_per_s": status["pages_per_s"],
        "retries": status.get("retries", 0),
        "dead_letters": status.get("dead_letters", 0),
        "leases": status["leases"],
        "workers": status["workers"],
    }


def line(status: dict[str, Any], elapsed: float) -> str:
    minutes, seconds = divmod(int(elapsed), 60)
    now = counts(status)
    return (
        f"pages {now['pages']:>8} | errors {now['errors']:>5} | queued {now['queued']:>8} | "
        f"{now['pages_per_s']:>7.1f} p/s | workers {now['workers']} | {minutes:02d}:{seconds:02d}"
    )


async def report(
    read: Callable[[], dict[str, Any]],
    stream: TextIO | Console = sys.stderr,
    tty_interval: float = 0.5,
    json_interval: float = 5.0,
) -> None:
    """Runs until cancelled; a terminal gets one line redrawn in place, other
    streams a `progress` event now and then and a last one when cancelled."""
    console = stream if isinstance(stream, Console) else Console(stream)
    started = time.monotonic()
    tty = console.isatty()
    try:
        while True:
            await asyncio.sleep(tty_interval if tty else json_interval)
            elapsed = time.monotonic() - started
            if tty:
                console.show(line(read(), elapsed))
            else:
                log.info("progress", **counts(read()), elapsed=round(elapsed, 1))
    finally:
        elapsed = time.monotonic() - started
        if tty:
            console.show(line(read(), elapsed))
            console.end()
        else:
            log.info("progress", **counts(read()), elapsed=round(elapsed, 1), final=True)
