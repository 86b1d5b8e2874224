"""The synthetic web's access log: one entry per request, as the server saw it."""

from __future__ import annotations

import json
import socket
import struct
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from aiohttp import web

MAX_LOGGED_BODY = 4096
# struct tcp_info (linux/tcp.h): 8 one-byte fields, 9 u32, then
# tcpi_last_data_sent, tcpi_last_data_recv (ms ago, in clock ticks).
_TCPI_LAST_DATA_RECV = 52


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
    # When the request reached the server's socket, by the kernel's clock
    # (see arrival_time): what pacing is judged on, since t_start also holds
    # however late the server's own loop ran. 0 in logs older than it.
    t_arrived: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> AccessEntry:
        return cls(**raw)

    @property
    def arrived(self) -> float:
        return self.t_arrived or self.t_start


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


def arrival_time(request: web.Request, now: float) -> float:
    """When the request's bytes reached the socket (wall clock), `now` being
    the time.time() of this call; `now` itself where the kernel cannot say.

    Linux keeps, per TCP connection, the time of the last data received: at
    the start of the handler that is the request just read (a client sends
    one request at a time on a connection). It is kept in clock ticks, so it
    is right to one tick (1-10 ms), whereas the handler's own start can lag
    by as much as the server's event loop or thread is kept from running (up
    to 80 ms seen with a busy machine).
    """
    sock = request.transport.get_extra_info("socket") if request.transport else None
    if sys.platform != "linux" or sock is None or not hasattr(socket, "TCP_INFO"):
        return now
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCPI_LAST_DATA_RECV + 4)
    except OSError:
        return now
    if len(info) < _TCPI_LAST_DATA_RECV + 4:
        return now
    ago_ms: int = struct.unpack_from("I", info, _TCPI_LAST_DATA_RECV)[0]
    return now - ago_ms / 1000
