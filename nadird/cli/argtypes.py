"""argparse types of the command line, shared by every subcommand.

Each refuses a bad value with one line: argparse turns the
ArgumentTypeError into `nadird CMD: error: argument --opt: MESSAGE` and exit
status 2, before anything runs.

float() accepts "nan" and "inf": NaN passes every range comparison (so
`--delay nan` would mean no delay at all) and infinity waits forever, so a
float option takes finite numbers only.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import PurePath
from typing import Any, Literal
from urllib.parse import urlsplit

from nadird.common.errors import InvalidURL
from nadird.common.urls import canonicalize
from nadird.config.seeds import seed_of
from nadird.job.request import RequestError

# `--out` formats by file extension: JSON lines or CSV (the export module's writers).
OutFormat = Literal["jsonl", "csv"]
OUT_FORMATS: dict[str, OutFormat] = {
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
}


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def duration(text: str) -> float:
    """A duration like 90s, 10m, 6h (plain numbers are seconds), > 0."""
    from nadird.revisit.durations import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def moment(text: str) -> float:
    """A point in time: ISO 8601 (2026-12-01T10:00:00Z; UTC without a zone),
    epoch seconds, or a duration ago (6h or `6h ago`: six hours before now;
    0s: now)."""
    import time
    from datetime import UTC, datetime

    from nadird.revisit.durations import parse_duration

    words = text.split()
    ago = len(words) > 1 and words[-1].lower() == "ago"
    try:
        if not ago and text.replace(".", "", 1).isdigit():
            return float(text)
        return time.time() - parse_duration(" ".join(words[:-1]) if ago else text, allow_zero=True)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a time (2026-12-01T10:00:00Z, epoch seconds, or a duration ago: "
            f"6h or '6h ago'), got {text!r}"
        ) from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def comma_list(text: str) -> list[str]:
    """`a,b,c` as ["a", "b", "c"]; blanks around names are ignored."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected names separated by commas, got {text!r}")
    return names


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def host_ip(text: str) -> tuple[str, str]:
    host, sep, ip = text.partition("=")
    if not sep or not host or not ip:
        raise argparse.ArgumentTypeError(
            f"expected HOST=IP (e.g. example.test=127.0.0.1), got {text!r}"
        )
    return host, ip


def check_seed(url: str) -> str:
    """The URL if it can be crawled, else a ValueError saying why.

    A URL without a scheme is refused rather than guessed: `example.com/a`
    could be meant as http or https, and a typo must not crawl nothing.
    """
    if "://" not in url:
        raise ValueError(f"{url!r} has no scheme (did you mean http://{url} or https://{url}?)")
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError(f"{url!r}: only http:// and https:// URLs can be crawled")
    try:
        canonicalize(url)
    except InvalidURL as exc:
        raise ValueError(f"{url!r}: {exc}") from None
    return url


def seed_url(text: str) -> str:
    try:
        return check_seed(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def seed_request(text: str) -> str | dict[str, Any]:
    """A seed URL, or a request as a JSON object ('{"url": ..., "method":
    "POST", ...}', see nadird/job/request.py), checked before anything is sent."""
    if not text.lstrip().startswith("{"):
        return seed_url(text)
    try:
        request = json.loads(text)
        seed_url(seed_of(request).url)
    except RequestError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    except ValueError as exc:  # not JSON
        raise argparse.ArgumentTypeError(f"not a JSON object: {exc}") from None
    if not isinstance(request, dict):
        raise argparse.ArgumentTypeError("expected a URL or a JSON object")
    return request


def out_format(path: str) -> OutFormat:
    """'jsonl' or 'csv', from the file's extension (what `--out` writes)."""
    return OUT_FORMATS[PurePath(path).suffix.lower()]


def out_file(text: str) -> str:
    if PurePath(text).suffix.lower() not in OUT_FORMATS:
        names = ", ".join(OUT_FORMATS)
        raise argparse.ArgumentTypeError(
            f"cannot tell the format of {text!r}: name it with one of {names}"
        )
    return text
