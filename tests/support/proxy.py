"""Tiny HTTP and SOCKS5 proxies on loopback, with a log of what they forwarded.

It answers absolute-form requests (`GET http://host:port/path HTTP/1.1`), as
clients send them to an HTTP proxy, by fetching the URL itself; every name
resolves to one loopback address, so it can only ever reach this machine.
Tests read `entries` to prove a request went through it. CONNECT (https
tunnels) is not supported: the synthetic web speaks plain HTTP. The SOCKS5
proxy tunnels CONNECTs, again only to loopback.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import aiohttp
from aiohttp import web

from nadird.testing.resolver import LoopbackResolver

# Hop-by-hop headers (RFC 9110 section 7.6.1) are not forwarded.
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer"}
    | {"transfer-encoding", "upgrade", "content-length", "host"}
)


@dataclass(frozen=True)
class ProxyEntry:
    t: float
    url: str  # the absolute URL asked for
    absolute_form: bool  # the request line carried a full URL, as proxies get
    client: str
    status: int


class ForwardProxy:
    def __init__(self, upstream: str = "127.0.0.1") -> None:
        self.upstream = upstream
        self.port = 0
        self._entries: list[ProxyEntry] = []
        self._lock = threading.Lock()
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    def entries(self) -> list[ProxyEntry]:
        with self._lock:
            return list(self._entries)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        connector = aiohttp.TCPConnector(resolver=LoopbackResolver(self.upstream))
        self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        sock = socket.create_server((host, port))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        url = str(request.url)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        status = 502
        try:
            async with self._session.request(
                request.method, url, headers=headers, allow_redirects=False
            ) as upstream:
                status = upstream.status
                body = await upstream.read()
                out = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_BY_HOP}
                return web.Response(status=status, body=body, headers=out)
        except aiohttp.ClientError as exc:
            return web.Response(status=502, text=f"proxy: {exc}\n")
        finally:
            entry = ProxyEntry(
                time.time(),
                url,
                request.raw_path.startswith(("http://", "https://")),
                request.remote or "",
                status,
            )
            with self._lock:
                self._entries.append(entry)


class Socks5Proxy:
    """A minimal SOCKS5 server (RFC 1928: no authentication, CONNECT only)
    that connects every destination, whatever its name, to `upstream`."""

    def __init__(self, upstream: str = "127.0.0.1") -> None:
        self.upstream = upstream
        self.port = 0
        self._entries: list[ProxyEntry] = []
        self._lock = threading.Lock()
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.Task[None]] = set()

    def entries(self) -> list[ProxyEntry]:
        with self._lock:
            return list(self._entries)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        self._server = await asyncio.start_server(self._client, host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._clients):  # open tunnels end with the proxy
            task.cancel()
        await asyncio.gather(*self._clients, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._clients.add(task)
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()
            if task is not None:
                self._clients.discard(task)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        _version, methods = await reader.readexactly(2)
        await reader.readexactly(methods)
        writer.write(b"\x05\x00")  # no authentication
        _version, command, _reserved, kind = await reader.readexactly(4)
        if kind == 1:
            host = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
        elif kind == 4:
            host = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
        else:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode()
        port = int.from_bytes(await reader.readexactly(2), "big")
        peer = writer.get_extra_info("peername")
        entry = ProxyEntry(time.time(), f"{host}:{port}", False, peer[0] if peer else "", 0)
        with self._lock:
            self._entries.append(entry)
        if command != 1:  # only CONNECT
            writer.write(b"\x05\x07\x00\x01" + bytes(6))
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(self.upstream, port)
        except OSError:
            writer.write(b"\x05\x05\x00\x01" + bytes(6))  # connection refused
            return
        writer.write(b"\x05\x00\x00\x01" + bytes(6))
        # Either side closing ends the tunnel (a keep-alive upstream never would).
        pipes = [
            asyncio.create_task(_pipe(reader, up_writer)),
            asyncio.create_task(_pipe(up_reader, writer)),
        ]
        try:
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pipe in pipes:
                pipe.cancel()
            await asyncio.gather(*pipes, return_exceptions=True)
            up_writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    if writer.can_write_eof():
        writer.write_eof()


@contextmanager
def run_proxy_in_thread(
    host: str = "127.0.0.1", kind: str = "http"
) -> Iterator[ForwardProxy | Socks5Proxy]:
    """A running proxy (port set), `http` or `socks5`, on its own event loop
    in a daemon thread."""
    proxy: ForwardProxy | Socks5Proxy = ForwardProxy() if kind == "http" else Socks5Proxy()
    started = threading.Event()
    loop = asyncio.new_event_loop()
    stopping = asyncio.Event()
    errors: list[BaseException] = []

    async def serve() -> None:
        try:
            await proxy.start(host)
        except BaseException as exc:
            errors.append(exc)
            started.set()
            return
        started.set()
        try:
            await stopping.wait()
        finally:
            await proxy.stop()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    started.wait(10)
    if errors:
        raise errors[0]
    try:
        yield proxy
    finally:
        loop.call_soon_threadsafe(stopping.set)
        thread.join(10)
        loop.close()
