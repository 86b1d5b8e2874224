"""A hostile corner of the synthetic web: robots variants, throttling,
slow and hanging servers, redirect chains and loops, huge bodies,
compression bombs, odd content, canonical/nofollow pages, sitemaps, traps.

Install it on a SyntheticWeb; hosts registered here (`add_host`) are served
from here and every other host still gets the site graph. On a registered
host:

* `/robots.txt`: the host's robots text, or a bare status code.
* pages added with `add_page` / `add_html`, matched on path + query.
* failure modes by path prefix, on any registered host:

  ====================  =====================================================
  /slow/SECONDS         a page after SECONDS
  /stall                no status line, ever (until the client gives up)
  /hang                 headers, then no body byte, ever
  /trickle              headers, then one byte every 0.1 s, forever
  /huge                 an endless body without Content-Length
  /huge-declared        Content-Length: 10 GiB, then an endless body
  /bomb/gzip|deflate|br an endless Content-Encoding stream of zeros
  /bomb/gzip-finite     64 MiB of zeros in ~65 KiB of gzip, Content-Length set
  /redirect/N           N redirects, then a page
  /loop/a, /loop/b      redirect to each other
  /to/HOST/PORT/PATH    redirect to http://HOST:PORT/PATH
  /binary               application/octet-stream
  /wrong-charset        says UTF-8, is windows-1252
  /latin1               ISO-8859-1, named by <meta charset> only
  /malformed            broken markup, NUL bytes and all
  /trap/...             each page links one level deeper, and to a repeat
  ====================  =====================================================

"Forever" is bounded: every endless response stops when the client hangs up
or after FOREVER seconds, so a stopped test never keeps a handler running.
`throttle(host, ...)` makes a host answer 429/503 with Retry-After after a
number of normal answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import html
import struct
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from aiohttp import web

from nadird.testing.web import SyntheticWeb

FOREVER = 30.0
_ZERO_BLOCK = 1024 * 1024
HTML = "text/html"


@dataclass
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Throttle:
    """After `after` normal answers, `times` answers of `status` with Retry-After
    ('date+N': an HTTP date N seconds ahead; None: no header)."""

    status: int
    retry_after: str | None
    after: int
    times: int
    served: int = 0
    throttled_at: list[float] = field(default_factory=list)  # time.time() of each
    sent: list[str | None] = field(default_factory=list)  # the Retry-After values sent


def html_page(
    title: str, links: Iterable[str] = (), head: str = "", body: str = "", rel: str = ""
) -> bytes:
    """A small valid page linking to `links` (rel attribute optional)."""
    rel_attr = f' rel="{rel}"' if rel else ""
    items = "".join(
        f'<li><a href="{html.escape(u)}"{rel_attr}>{html.escape(u)}</a></li>' for u in links
    )
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"{head}</head><body><h1>{html.escape(title)}</h1><ul>{items}</ul>{body}</body></html>"
    ).encode()


def sitemap_xml(urls: Iterable[str]) -> bytes:
    entries = "".join(f"<url><loc>{html.escape(u)}</loc></url>" for u in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
    ).encode()


def sitemap_index(urls: Iterable[str]) -> bytes:
    entries = "".join(f"<sitemap><loc>{html.escape(u)}</loc></sitemap>" for u in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}'
        "</sitemapindex>"
    ).encode()


@functools.cache
def _zero_stream(coding: str) -> tuple[bytes, bytes]:
    """(header, block) such that header + block * n is a valid stream of
    n MiB of zeros in that coding, for any n. Full flushes make every block
    byte-aligned and independent, so one block can be repeated."""
    zeros = bytes(_ZERO_BLOCK)
    if coding == "br":
        import brotli

        # Brotli has no such flush: one stream of 256 MiB of zeros (~48 KiB
        # at quality 1, built in a tenth of the time quality 5 takes) is
        # built once and sent once.
        compressor = brotli.Compressor(quality=1)
        parts = [compressor.process(zeros) for _ in range(256)]
        return b"", b"".join([*parts, compressor.finish()])
    wbits = 31 if coding == "gzip" else 15
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    return first, block


@functools.cache
def _finite_gzip(mib: int = 64) -> bytes:
    """A whole gzip file of `mib` MiB of zeros, from the repeatable blocks:
    milliseconds, where compressing 64 MiB takes seconds."""
    first, block = _zero_stream("gzip")
    crc = 0
    zeros = bytes(_ZERO_BLOCK)
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    last_empty_block = b"\x03\x00"  # final fixed-Huffman block, no symbols but the end
    trailer = struct.pack("<II", crc, (mib * _ZERO_BLOCK) & 0xFFFFFFFF)
    return first + block * (mib - 1) + last_empty_block + trailer


def _build_bombs() -> None:
    """Build every bomb before the server answers: built while a client
    waits, on a busy machine they outlasted its read timeout (gzip-finite
    even stalled the server's loop), and the fetch ended as a timeout
    before the bomb could go off."""
    _finite_gzip()
    _zero_stream("deflate")
    with contextlib.suppress(ImportError):  # without brotli, /bomb/br fails by itself
        _zero_stream("br")


class HostileWeb:
    def __init__(self) -> None:
        self.hosts: set[str] = set()
        self.robots: dict[str, str | int] = {}
        self.pages: dict[tuple[str, str], Page] = {}
        self.throttles: dict[str, Throttle] = {}
        self._lock = threading.Lock()
        self._web: SyntheticWeb | None = None

    # ------------------------------------------------------------ set-up

    def install(self, server: SyntheticWeb) -> HostileWeb:
        _build_bombs()  # once per process
        self._web = server
        server.add_route("/", self.dispatch)
        return self

    def add_host(self, host: str, robots: str | int | None = None) -> None:
        """Serve `host` from here; robots.txt is `robots` (text or status), else 404."""
        self.hosts.add(host)
        if robots is not None:
            self.robots[host] = robots

    def add_page(self, host: str, path: str, page: Page) -> None:
        self.hosts.add(host)
        self.pages[(host, path)] = page

    def add_html(self, host: str, path: str, links: Iterable[str] = (), **kwargs: str) -> None:
        self.add_page(host, path, Page(html_page(f"{host}{path}", links, **kwargs)))

    def throttle(
        self,
        host: str,
        status: int = 429,
        retry_after: str | None = "1",
        after: int = 2,
        times: int = 1,
    ) -> Throttle:
        self.hosts.add(host)
        rule = self.throttles[host] = Throttle(status, retry_after, after, times)
        return rule

    # ----------------------------------------------------------- serving

    async def dispatch(self, request: web.Request, host: str) -> web.StreamResponse:
        if host not in self.hosts:
            assert self._web is not None
            return await self._web.serve_graph(request, host)
        path = request.path
        page = self.pages.get((host, request.path_qs)) or self.pages.get((host, path))
        if path == "/robots.txt":  # a page added there (a redirect, say) wins
            return _serve(page) if page is not None else self._robots(host)
        throttled = self._throttled(host)
        if throttled is not None:
            return throttled
        if page is not None:
            return _serve(page)
        return await self._mode(request, host, path)

    def _robots(self, host: str) -> web.Response:
        robots = self.robots.get(host, 404)
        if isinstance(robots, int):
            return web.Response(status=robots, text=f"{robots}\n")
        return web.Response(text=robots, content_type="text/plain")

    def _throttled(self, host: str) -> web.Response | None:
        rule = self.throttles.get(host)
        if rule is None:
            return None
        with self._lock:
            rule.served += 1
            if not rule.after < rule.served <= rule.after + rule.times:
                return None
            rule.throttled_at.append(time.time())
        value = rule.retry_after
        if value is not None and value.startswith("date+"):
            # An HTTP date that many seconds ahead (whole seconds, as HTTP dates are).
            value = email.utils.formatdate(time.time() + float(value[5:]), usegmt=True)
        rule.sent.append(value)
        headers = {"Retry-After": value} if value is not None else {}
        return web.Response(status=rule.status, text="slow down\n", headers=headers)

    async def _mode(self, request: web.Request, host: str, path: str) -> web.StreamResponse:
        parts = path.strip("/").split("/")
        head = parts[0]
        if head == "slow":
            await asyncio.sleep(float(parts[1]))
            return _html(host, path)
        if head in ("stall", "hang", "trickle", "huge", "huge-declared"):
            return await self._endless(request, head)
        if head == "bomb":
            return await self._bomb(request, parts[1])
        if head in ("redirect", "loop", "to"):
            return _redirect(parts)
        if head == "trap":
            return _trap(host, path)
        if head == "binary":
            return web.Response(
                body=bytes(range(256)) * 16, content_type="application/octet-stream"
            )
        if head == "wrong-charset":
            body = html_page("Caf\u00e9 cr\u00e8me", head="").replace(b'charset="utf-8"', b"")
            body = body.decode().encode("cp1252")
            return web.Response(body=body, headers={"Content-Type": "text/html; charset=utf-8"})
        if head == "latin1":  # no charset in the header; <meta> names the right one
            body = html_page("Caf\u00e9 cr\u00e8me").replace(b'"utf-8"', b'"iso-8859-1"')
            body = body.decode().encode("latin-1")
            return web.Response(body=body, headers={"Content-Type": "text/html"})
        if head == "malformed":
            body = b"<html><head><title>bad</title><body><<a href='/x'>>\x00\x00<p<div></td></html"
            return web.Response(body=body, headers={"Content-Type": "text/html"})
        return web.Response(status=404, text="404: Not Found\n")

    async def _endless(self, request: web.Request, mode: str) -> web.StreamResponse:
        deadline = time.monotonic() + FOREVER
        if mode == "stall":
            while time.monotonic() < deadline and not _gone(request):
                await asyncio.sleep(0.05)
            return web.Response(text="too late\n")
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        if mode == "huge-declared":
            response.content_length = 10 * 1024**3
        await response.prepare(request)
        chunk = b"x" if mode == "trickle" else b"<p>" + b"x" * (64 * 1024 - 3)
        while time.monotonic() < deadline and not _gone(request):
            if mode == "hang":
                await asyncio.sleep(0.05)
                continue
            await response.write(chunk)
            await asyncio.sleep(0.1 if mode == "trickle" else 0)
        return response

    async def _bomb(self, request: web.Request, coding: str) -> web.StreamResponse:
        if coding == "gzip-finite":
            return web.Response(
                body=_finite_gzip(), headers={"Content-Type": HTML, "Content-Encoding": "gzip"}
            )
        first, block = _zero_stream(coding)  # built by install()
        response = web.StreamResponse(headers={"Content-Type": HTML, "Content-Encoding": coding})
        await response.prepare(request)
        await response.write(first)
        deadline = time.monotonic() + FOREVER
        # Brotli's block is a whole stream: sent once.
        rounds = 1 if coding == "br" else 10_000
        for _ in range(rounds):
            if time.monotonic() > deadline or _gone(request):
                break
            await response.write(block)
        return response


def _serve(page: Page) -> web.Response:
    headers = {"Content-Type": page.content_type, **page.headers}
    return web.Response(status=page.status, body=page.body, headers=headers)


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _html(host: str, path: str, links: Iterable[str] = ()) -> web.Response:
    return web.Response(body=html_page(f"{host}{path}", links), content_type=HTML)


def _redirect(parts: list[str]) -> web.StreamResponse:
    head = parts[0]
    if head == "loop":
        target = "/loop/b" if parts[1:] == ["a"] else "/loop/a"
    elif head == "to":
        host, port, rest = parts[1], parts[2], "/".join(parts[3:])
        target = f"http://{host}:{port}/{rest}"
    else:
        hops = int(parts[1])
        if hops <= 0:
            return web.Response(body=html_page("arrived"), content_type=HTML)
        target = f"/redirect/{hops - 1}"
    return web.Response(status=302, headers={"Location": target})


def _trap(host: str, path: str) -> web.Response:
    """A calendar-like trap: every page links one level deeper and repeats itself."""
    below = f"{path.rstrip('/')}/next"
    again = f"{path.rstrip('/')}/trap"
    return _html(host, path, [below, again])
