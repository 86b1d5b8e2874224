"""The web console's own section: its language, the sign-in limit and its charts' samples."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nadird.config.checks import positive

# auto: the browser's Accept-Language; en or zh-CN: that one, whatever the
# browser asks (the page's language switch still overrides it).
ConsoleLanguage = Literal["auto", "en", "zh-CN"]


@dataclass(frozen=True)
class ConsoleConfig:
    language: ConsoleLanguage = "auto"
    # A client address (an IPv6 /64) with this many wrong tokens within
    # login_window seconds is answered 429 until the oldest one is that old.
    login_failures: int = 5
    login_window: float = 300.0
    # Addresses remembered at once; past this the least recently failed goes,
    # so that an attacker rotating addresses cannot grow the table.
    login_clients: int = 10_000
    # Seconds between the samples of the Crawl page's charts and
    # /api/stats/history (the master keeps 360 of them, and every 30th of
    # them 288 times: an hour and a day at 10 s).
    history_every: float = 10.0

    def __post_init__(self) -> None:
        positive(self, "login_failures", "login_window", "login_clients", "history_every")
