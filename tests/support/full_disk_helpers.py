"""A settable clock, failing writes and an HTTP getter for the full-disk tests."""

from __future__ import annotations

import json
import urllib.error
import urllib.request


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def http_get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def failing(base: str) -> dict[str, object]:
    """What /healthz says cannot be written (nothing while it answers 200)."""
    code, body = http_get(base + "/healthz")
    return json.loads(body)["state"]["failing"] if code == 503 else {}
