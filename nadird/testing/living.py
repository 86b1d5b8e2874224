"""A living web: pages that change over time, for measuring a revisiting crawler.

`LivingWeb(pages, seed, scale=...)` serves the pages of livingpages.py on the
hosts living-0.test, living-1.test, ... (PAGES_PER_HOST pages each) of a
SyntheticWeb it is installed on; other hosts still get the site graph.

  /                the host's home: links to every page of the host (never changes)
  /robots.txt      allows everything
  /product/N, /article/N, /hub/N   page N of the collection
  /cart?sid=...    where the session-id noise links (never changes)

Time is virtual: `ScaledClock(scale)` runs `scale` virtual seconds per real
second from its creation (scale=600: an hour in 6 s), `ManualClock`
moves only when a test moves it. Last-Modified and Date carry the virtual time
as a date counted from EPOCH. Conditional GETs get 304 (no body) only when the
validator sent matches the version live now; If-None-Match, when sent, decides
alone (RFC 9110). Pages whose validators misbehave are listed in livingpages.py.

Every answer for a collection page is recorded as a LivingEntry: page, virtual
time, version served, status, body bytes. The judge (judge.py) reads these.

Run `python -m nadird.testing.living --pages N --scale S --port P --seed K`
for a server in its own process; it prints one JSON line (port, hosts, seeds)
and serves until SIGINT or SIGTERM. The same --pages and --seed rebuild the
same change times in any process, so a judge can run elsewhere.
"""

from __future__ import annotations

import argparse
import calendar
import email.utils
import html
import json
import math
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol, TextIO

from aiohttp import web

from nadird.testing import livingpages
from nadird.testing.graph import SiteGraph
from nadird.testing.livingpages import LivingPage
from nadird.testing.web import SyntheticWeb, serve_until_signalled

# Virtual time 0, as a date (what Last-Modified and Date count from).
EPOCH = float(calendar.timegm((2026, 11, 1, 0, 0, 0)))
HTML = "text/html; charset=utf-8"
ROBOTS = "User-agent: *\nAllow: /\n"


class Clock(Protocol):
    def now(self) -> float:
        """Virtual seconds since the living web's time 0."""
        ...


class ScaledClock:
    """`scale` virtual seconds per real second, counted from `start` at creation."""

    def __init__(self, scale: float = 1.0, start: float = 0.0) -> None:
        if not (scale > 0 and math.isfinite(scale)):
            raise ValueError(f"expected a time scale > 0, got {scale}")
        self.scale = scale
        self._start = start
        self._origin = time.monotonic()

    def now(self) -> float:
        return self._start + (time.monotonic() - self._origin) * self.scale


class ManualClock:
    """Virtual time that moves only when told to (never backwards)."""

    def __init__(self, t: float = 0.0) -> None:
        self._t = t

    def now(self) -> float:
        return self._t

    def set(self, t: float) -> None:
        if t < self._t:
            raise ValueError(f"virtual time cannot go back from {self._t} to {t}")
        self._t = t


@dataclass(frozen=True)
class LivingEntry:
    """One answer for a collection page, as the living web served it."""

    t: float  # virtual time the answer was made at
    page: int  # index in the collection
    path: str  # with the query string if any
    version: int  # the version live at t (what the client holds after a 200 or 304)
    status: int  # 200 or 304
    bytes: int  # body bytes sent (0 for a 304 or a HEAD)
    conditional: bool  # If-None-Match or If-Modified-Since was sent
    etag_sent: bool = False  # If-None-Match was sent

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_living_log(path: str) -> list[LivingEntry]:
    """The entries of a JSON-lines living log, even while a server appends to it."""
    with open(path, encoding="utf-8") as file:
        lines = file.read().split("\n")
    return [LivingEntry(**json.loads(line)) for line in lines[:-1] if line]


def http_date(t: float) -> str:
    """The date of virtual time t, whole seconds, as HTTP writes it."""
    return email.utils.formatdate(EPOCH + math.floor(t), usegmt=True)


class LivingWeb:
    """The collection, its clock and the log of what was served; see the module doc."""

    def __init__(
        self,
        pages: int = 200,
        seed: int = 0,
        clock: Clock | None = None,
        log_path: str | None = None,
        **options: Any,
    ) -> None:
        """options go to livingpages.build_pages (pages_per_host, rates, validators, ...)."""
        self.seed = seed
        self.clock: Clock = clock if clock is not None else ScaledClock()
        self.pages = livingpages.build_pages(pages, seed, **options)
        self.hosts = sorted({p.host for p in self.pages}, key=lambda h: int(h[7:-5]))
        self._by_path = {(p.host, p.path): p for p in self.pages}
        self._on_host = {h: [p for p in self.pages if p.host == h] for h in self.hosts}
        self.log: list[LivingEntry] = []
        self._serial = 0  # responses so far: feeds noise and rotating ETags
        self._lock = threading.Lock()
        self._log_path = log_path
        self._log_file: TextIO | None = None
        self._web: SyntheticWeb | None = None

    def install(self, server: SyntheticWeb) -> LivingWeb:
        self._web = server
        server.add_route("/", self.handle)
        if self._log_path is not None:
            self._log_file = open(self._log_path, "a", encoding="utf-8")  # noqa: SIM115
        return self

    def close(self) -> None:
        with self._lock:
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None

    # ------------------------------------------------------------ the truth

    def seeds(self) -> list[str]:
        port = self._web.port if self._web is not None else 0
        return [f"http://{host}:{port}/" for host in self.hosts]

    def url(self, page: LivingPage) -> str:
        port = self._web.port if self._web is not None else 0
        return f"http://{page.host}:{port}{page.path}"

    def rates(self) -> list[float]:
        return [p.rate for p in self.pages]

    def truth(self, until: float) -> dict[int, list[float]]:
        """Every page's change times up to `until`: what the judge compares against."""
        return {p.index: p.schedule.changes_until(until) for p in self.pages}

    def entries(self) -> list[LivingEntry]:
        """A copy of the living log, safe to call from any thread."""
        with self._lock:
            return list(self.log)

    # ------------------------------------------------------------- serving

    async def handle(self, request: web.Request, host: str) -> web.StreamResponse:
        if host not in self._on_host:
            assert self._web is not None
            return await self._web.serve_graph(request, host)
        path = request.path
        if path == "/robots.txt":
            return web.Response(text=ROBOTS, content_type="text/plain")
        if path in ("/", "/cart"):
            return web.Response(body=self._home(host, path), content_type="text/html")
        page = self._by_path.get((host, path))
        if page is None:
            return web.Response(status=404, text="404: Not Found\n")
        return self._answer(request, page)

    def _answer(self, request: web.Request, page: LivingPage) -> web.Response:
        t = self.clock.now()
        version = page.schedule.version_at(t)
        with self._lock:
            self._serial += 1
            serial = self._serial
        headers = {"Date": http_date(t), **self._validators(page, version, serial)}
        conditional = "If-None-Match" in request.headers or "If-Modified-Since" in request.headers
        if self._not_modified(request, page, version, headers):
            response = web.Response(status=304, headers=headers)
            sent = 0
        else:
            noise = livingpages.noise_for(self.seed, serial, http_date(t)) if page.noise else None
            body = livingpages.render(self.seed, page, version, self._on_host[page.host], noise)
            headers["Content-Type"] = HTML
            response = web.Response(body=body, headers=headers)
            sent = len(body) if request.method == "GET" else 0
        path = request.raw_path
        etag_sent = "If-None-Match" in request.headers
        entry = LivingEntry(
            t, page.index, path, version, response.status, sent, conditional, etag_sent
        )
        self._record(entry)
        return response

    def _validators(self, page: LivingPage, version: int, serial: int) -> dict[str, str]:
        kind = page.validators
        headers = {}
        if kind in ("both", "etag", "ignored-etag"):
            headers["ETag"] = livingpages.etag(self.seed, page, version)
        elif kind in ("rotating-etag", "rotating-etag-dated"):
            headers["ETag"] = livingpages.etag(self.seed, page, -serial)
        if kind in ("both", "last-modified", "rotating-etag-dated"):
            headers["Last-Modified"] = http_date(page.schedule.became_live(version))
        return headers

    def _not_modified(
        self, request: web.Request, page: LivingPage, version: int, headers: dict[str, str]
    ) -> bool:
        if page.validators in ("none", "ignored-etag"):
            return False
        if_none_match = request.headers.get("If-None-Match")
        if if_none_match is not None:
            current = headers.get("ETag")
            return current is not None and _etag_listed(if_none_match, current)
        if "Last-Modified" not in headers:
            return False
        since = _parse_http_date(request.headers.get("If-Modified-Since", ""))
        # Change times are whole seconds, so a second's date names one version.
        return since is not None and page.schedule.became_live(version) <= since - EPOCH

    def _home(self, host: str, path: str) -> bytes:
        links = "".join(
            f'<li><a href="{p.path}">{html.escape(p.name)}</a></li>'
            for p in (self._on_host[host] if path == "/" else ())
        )
        return (
            f"<!DOCTYPE html>\n<html><head><title>{host}{path}</title></head>\n"
            f"<body><h1>{host}</h1><ul>{links}</ul></body></html>\n"
        ).encode()

    def _record(self, entry: LivingEntry) -> None:
        with self._lock:
            self.log.append(entry)
            if self._log_file is not None:
                self._log_file.write(json.dumps(entry.to_dict()) + "\n")
                self._log_file.flush()


def _etag_listed(header: str, current: str) -> bool:
    """Whether If-None-Match lists `current`, compared weakly (W/ ignored) as for GET."""
    if header.strip() == "*":
        return True
    wanted = current.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == wanted for tag in header.split(","))


def _parse_http_date(value: str) -> float | None:
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # an invalid date is ignored, as RFC 9110 says
    return parsed.timestamp() if parsed.tzinfo is not None else None


# ------------------------------------------------------------------------ CLI


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m nadird.testing.living", description="Serve the living web."
    )
    parser.add_argument("--pages", type=int, default=200, help="pages in the collection")
    parser.add_argument("--pages-per-host", type=int, default=livingpages.PAGES_PER_HOST)
    parser.add_argument("--scale", type=float, default=1.0, help="virtual seconds per second")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", default=None, help="append the living log (JSON lines) here")
    parser.add_argument("--access-log", default=None, help="append the access log here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        clock = ScaledClock(args.scale)
        living = LivingWeb(
            args.pages, args.seed, clock, args.log, pages_per_host=args.pages_per_host
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    server = SyntheticWeb(SiteGraph(hosts=1, pages=1), access_log_path=args.access_log)
    living.install(server)

    def describe(port: int) -> dict[str, object]:
        line = {"port": port, "hosts": living.hosts, "seeds": living.seeds()}
        return {**line, "scale": args.scale, "seed": args.seed}

    try:
        return serve_until_signalled(server, args.host, args.port, describe)
    finally:
        living.close()


if __name__ == "__main__":
    sys.exit(main())
