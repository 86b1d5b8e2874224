"""Progress of `nadird crawl`: a live line on a terminal, JSON events otherwise."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from nadird.logs import get_logger

log = get_logger()


def line(status: dict[str, Any], elapsed: float) -> str:
    minutes, seconds = divmod(int(elapsed), 60)
    errors = sum(status.get("errors_by_kind", {}).values())
    return (
        f"pages {status['stored']:>8} | queued {status['queued']:>8} | "
        f"{status['pages_per_s']:>7.1f} p/s | errors {errors:>5} | "
        f"workers {status['workers']} | {minutes:02d}:{seconds:02d}"
    )


async def report(
    read: Callable[[], dict[str, Any]],
    stream: TextIO = sys.stderr,
    tty_interval: float = 0.5,
    json_interval: float = 5.0,
) -> None:
    """Runs until cancelled; a terminal gets one line redrawn in place."""
    started = time.monotonic()
    tty = stream.isatty()
    try:
        while True:
            await asyncio.sleep(tty_interval if tty else json_interval)
            status = read()
            elapsed = time.monotonic() - started
            if tty:
                stream.write("\r" + line(status, elapsed))
                stream.flush()
            else:
                log.info(
                    "progress",
                    stored=status["stored"],
                    queued=status["queued"],
                    pages_per_s=status["pages_per_s"],
                    leases=status["leases"],
                    workers=status["workers"],
                    elapsed=round(elapsed, 1),
                )
    finally:
        if tty:
            stream.write("\n")
            stream.flush()
