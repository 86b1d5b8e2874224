"""What a message may hold: the limits a well-behaved peer never reaches, and
the checks messages.py runs on its fields when a message is built (a frame
off the wire too), so a handler never meets a list of the wrong length or
an oversized URL."""

from __future__ import annotations

from typing import Any

from nadird.job.request import check_wire

FP_LEN = 16


def check_fps(name: str, fps: list[bytes]) -> None:
    # map/set run in C: a results message has thousands of fingerprints.
    if fps and set(map(len, fps)) != {FP_LEN}:
        raise ValueError(f"{name}: every fingerprint must be {FP_LEN} bytes")


# Limits a well-behaved peer never reaches; anything beyond is refused.
MAX_URL = 8192
MAX_URLS = 10_000
MAX_PAGES = 1000
MAX_NAME = 256
MAX_SESSION = 64
MAX_HELD = 1000  # bags listed in one Hello (running and recently finished)
SESSION_BYTES = 16  # what the master hands out
MAX_TOKEN = 8192  # a login's token (a JWT is far shorter)
MAX_VALIDATOR = 1024  # an ETag or a Last-Modified date (the stored header cut)


def check_urls(name: str, urls: list[str]) -> None:
    if len(urls) > MAX_URLS:
        raise ValueError(f"{name}: more than {MAX_URLS} URLs")
    if urls and max(map(len, urls)) > MAX_URL:
        raise ValueError(f"{name}: a URL longer than {MAX_URL} characters")


def check_names(**names: str) -> None:
    for field_name, value in names.items():
        if len(value) > MAX_NAME:
            raise ValueError(f"{field_name}: longer than {MAX_NAME} characters")


def check_lease_ids(name: str, leases: list[str]) -> None:
    """A list of lease ids (of bags a worker keeps): as many as a Hello may hold."""
    if len(leases) > MAX_HELD:
        raise ValueError(f"{name}: more than {MAX_HELD} leases")
    if leases and max(map(len, leases)) > MAX_NAME:
        raise ValueError(f"{name}: a lease id longer than {MAX_NAME} characters")


def check_requests(name: str, urls: list[str], requests: list[dict[str, Any] | None]) -> None:
    """RequestSpec.to_wire() maps beside their URLs (None: a plain GET)."""
    if not requests:
        return
    if len(requests) != len(urls):
        raise ValueError(f"urls, {name} must have the same length")
    for wire in requests:
        if wire is not None:
            check_wire(wire)


def same_length(**lists: list[Any]) -> None:
    lengths = {len(v) for v in lists.values()}
    if len(lengths) > 1:
        raise ValueError(f"{', '.join(lists)} must have the same length")
