"""The synthetic web's access log: one entry per request, as the server saw it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web

MAX_LOGGED_BODY = 4096


@dataclass(frozen=True)
class AccessEntry:
    """One request as the server saw it."""

    t_start: float  # time.time() when the handler started
    t_end: float  # time.time() once the response was prepared (headers sent) or abandoned
    host: str  # Host header, lower-case, without port
    path: str  # path as sent, with the query string if any
    status: int
    client: str  # remote IP address
    ua: str  # User-Agent header, "" if none
    # What a request other than a plain GET brought (older logs lack them).
    method: str = "GET"
    body: str = ""  # the request body as text (cut at MAX_LOGGED_BODY), "" if none
    # Request headers a crawl may set itself: X-* and Cookie, lower-case names.
    headers: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> AccessEntry:
        return cls(**raw)


def read_access_log(path: str) -> list[AccessEntry]:
    """The entries of a JSON-lines access log, even while a server appends to it."""
    with open(path, encoding="utf-8") as file:
        lines = file.read().split("\n")
    # The last element is "" or a line still being written: not an entry yet.
    return [AccessEntry.from_dict(json.loads(line)) for line in lines[:-1] if line]


def logged_headers(request: web.Request) -> dict[str, str]:
    """The request headers a crawl's job or request may have set (X-*, Cookie)."""
    return {
        name.lower(): value
        for name, value in request.headers.items()
        if name.lower().startswith("x-") or name.lower() == "cookie"
    }
