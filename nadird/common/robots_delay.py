"""The pace robots.txt asks of one user agent: Crawl-delay, else the interval
of a Request-rate line. Shared by the worker (its pacer) and the master (the
revisit budget of a domain, from the robots.txt files workers pass on)."""

from __future__ import annotations

import re

from protego import Protego

# Worth parsing a file for its pace only if it names one (most do not).
_NAMES_A_PACE = re.compile(r"crawl-delay|request-rate", re.IGNORECASE)


def robots_delay(parser: Protego, token: str) -> float | None:
    """Seconds between two requests the file asks of `token` (None: no rule)."""
    delay = parser.crawl_delay(token)
    if delay is not None:
        return float(delay)
    rate = parser.request_rate(token)
    if rate is not None and rate.requests > 0:
        return float(rate.seconds) / float(rate.requests)
    return None


def text_delay(text: str, token: str) -> float:
    """robots_delay of a file's text; 0.0 without a rule or unparseable."""
    if not _NAMES_A_PACE.search(text):
        return 0.0
    try:
        parser = Protego.parse(text)
    except Exception:  # the worker ignores such a file too (robots.py, prime)
        return 0.0
    delay = robots_delay(parser, token)
    return delay if delay is not None and delay > 0 else 0.0
