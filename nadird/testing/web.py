"""The synthetic web served over HTTP, with a log of what was really fetched.

One aiohttp app answers for every host name of a SiteGraph at once: it picks the
site by the Host header, so a crawler only has to resolve `*.test` to the
loopback address (see LoopbackResolver). The access log is the ground truth of
crawler tests: "nothing was fetched twice", "robots.txt came first", "no request
reached outside.test" are all questions about it.

Failure modes (robots variants, 429, hanging responses, redirects, bombs) are
added with `SyntheticWeb.add_route(prefix, handler)`; a handler that only
changes some hosts can fall back to `serve_graph`. Such corners: hostile.py
(failure modes), jspages.py (pages only a browser can read), legacy.py
(Chinese, Japanese and Korean pages in undeclared legacy encodings),
catalog.py (a paginated JSON API, and pages whose data is in JSON-LD and
inline scripts: `--catalog N` serves it).

Run `python -m nadird.testing.web --port 0` for a server in its own process: it
prints one JSON line with the bound port and the seeds, then serves until
SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from aiohttp import web

from nadird.testing.access import (
    MAX_LOGGED_BODY,
    AccessEntry,
    arrival_time,
    logged_headers,
    read_access_log,
)
from nadird.testing.catalog import Catalog
from nadird.testing.graph import SiteGraph

__all__ = ["AccessEntry", "SyntheticWeb", "read_access_log", "run_in_thread"]

Handler = Callable[[web.Request, str], Awaitable[web.StreamResponse]]

# nginx's code for "client closed the request": logged when the client hangs
# up before the response is complete, e.g. a crawler timing out.
CLIENT_CLOSED = 499
# Without a bound, stopping waits up to a minute for hanging handlers.
_SHUTDOWN_TIMEOUT = 1.0
# Every graph page says it last changed then (so crawls have headers to keep).
LAST_MODIFIED = "Sun, 01 Nov 2026 00:00:00 GMT"
_START_TIMEOUT = 10.0
READ_METHODS = frozenset({"GET", "HEAD"})


class SyntheticWeb:
    """An aiohttp server for a SiteGraph, recording every request it answers.

    start() sets graph.port to the bound port, because the pages' absolute
    links must point back at this server.
    """

    def __init__(
        self, graph: SiteGraph, latency: float = 0.0, access_log_path: str | None = None
    ) -> None:
        self.graph = graph
        self.latency = latency
        self.access_log_path = access_log_path
        self.access_log: list[AccessEntry] = []
        self.port = 0
        # The server thread appends while a test thread reads: see entries().
        self._lock = threading.Lock()
        self._log_file: TextIO | None = None
        self._runner: web.AppRunner | None = None
        self._routes: list[tuple[str, Handler, frozenset[str]]] = [
            ("/", self.serve_graph, READ_METHODS)
        ]

    def add_route(
        self, prefix: str, handler: Handler, methods: frozenset[str] = frozenset()
    ) -> None:
        """Answer paths starting with prefix with handler; the longest prefix wins.

        The handler gets the request and its lower-case host; latency, the
        access log and method checks are applied around it as for any route.
        A prefix given again replaces its handler ("/" replaces the graph,
        which the new handler may still call as serve_graph). `methods` are
        the ones it takes besides GET and HEAD (others are answered 405).
        """
        self._routes = [route for route in self._routes if route[0] != prefix]
        self._routes.append((prefix, handler, READ_METHODS | methods))
        self._routes.sort(key=lambda route: len(route[0]), reverse=True)

    def entries(self) -> list[AccessEntry]:
        """A copy of the access log, safe to call from any thread."""
        with self._lock:
            return list(self.access_log)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Bind, tell the graph the port, then serve. Returns the bound port."""
        if self.access_log_path is not None:
            self._log_file = open(self.access_log_path, "a", encoding="utf-8")  # noqa: SIM115
        try:
            sock = self._bind(host, port)
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", self._dispatch)
            # aiohttp's own access log is off: ours is the one tests read.
            self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=_SHUTDOWN_TIMEOUT)
            await self._runner.setup()
            await web.SockSite(self._runner, sock).start()
        except BaseException:
            await self.stop()  # a failed start leaves no open file behind
            raise
        return self.port

    def _bind(self, host: str, port: int) -> socket.socket:
        # Binding before serving lets every page, even the first one fetched,
        # carry absolute links with the real port.
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.create_server((host, port), family=family)
        self.port = sock.getsockname()[1]
        self.graph.port = self.port
        return sock

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        with self._lock:
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None

    async def serve_graph(self, request: web.Request, host: str) -> web.StreamResponse:
        """The default route: whatever the graph holds at (host, path)."""
        resource = self.graph.resource(host, request.path)
        headers = {"Content-Type": resource.content_type, "Last-Modified": LAST_MODIFIED}
        if resource.status == 200:
            headers["ETag"] = etag_of(resource.body)
        return web.Response(status=resource.status, body=resource.body, headers=headers)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        t_start = time.time()
        t_arrived = arrival_time(request, t_start)  # before reading on: see arrival_time
        host = request_host(request)
        status = CLIENT_CLOSED
        # Read first (aiohttp keeps it for the handler): the log shows what was sent.
        body = await request.read() if request.body_exists else b""
        try:
            response = await self._prepared_response(request, host)
            status = response.status
        except web.HTTPException as exc:
            status = exc.status
            raise
        except ConnectionError:
            # The client hung up mid-response: keep CLIENT_CLOSED, not 500.
            raise
        except Exception:
            status = 500
            raise
        finally:
            # Recorded before the last write, so that a client holding a
            # complete response always finds its entry in the log.
            self._record(request, host, status, t_start, body, t_arrived=t_arrived)
        await response.write_eof()
        return response

    async def _prepared_response(self, request: web.Request, host: str) -> web.StreamResponse:
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        response = await self._respond(request, host)
        # Sends the headers (a streaming handler has sent its body too), so
        # t_end covers all the time the client waited.
        await response.prepare(request)
        return response

    async def _respond(self, request: web.Request, host: str) -> web.StreamResponse:
        path = request.path
        handler, methods = next((h, m) for prefix, h, m in self._routes if path.startswith(prefix))
        if request.method not in methods:
            return web.Response(status=405, text="405: Method Not Allowed\n")
        return await handler(request, host)

    def _record(
        self,
        request: web.Request,
        host: str,
        status: int,
        t_start: float,
        body: bytes,
        *,
        t_arrived: float,
    ) -> None:
        entry = AccessEntry(
            t_start=t_start,
            t_end=time.time(),
            t_arrived=t_arrived,
            host=host,
            path=request.raw_path,
            status=status,
            client=request.remote or "",
            ua=request.headers.get("User-Agent", ""),
            method=request.method,
            body=body[:MAX_LOGGED_BODY].decode("utf-8", "replace"),
            headers=logged_headers(request),
        )
        with self._lock:
            self.access_log.append(entry)
            if self._log_file is not None:
                # One short line per request: a blocking write is cheaper than
                # a thread hop, and the flush lets another process tail it.
                self._log_file.write(json.dumps(entry.to_dict()) + "\n")
                self._log_file.flush()


def etag_of(body: bytes) -> str:
    """The ETag the synthetic web sends for a body (what a crawl should store)."""
    return f'"{hashlib.blake2b(body, digest_size=8).hexdigest()}"'


def request_host(request: web.Request) -> str:
    """The Host header's name, lower-case, without port or trailing dot."""
    raw = request.headers.get("Host", "").strip().lower()
    if raw.startswith("["):  # [::1]:8080
        name = raw[1:].split("]", 1)[0]
    else:
        name, _, port = raw.rpartition(":")
        if not name or not port.isdigit():
            name = raw
    return name.rstrip(".")


# ---------------------------------------------------------------- in a thread


class _ServerThread(threading.Thread):
    """Runs a SyntheticWeb on an event loop of its own until shutdown()."""

    def __init__(self, server: SyntheticWeb, host: str, port: int) -> None:
        super().__init__(name="synthetic-web", daemon=True)
        self.server = server
        self.host = host
        self.port = port
        self.started = threading.Event()
        self.error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None

    def run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        try:
            await self.server.start(self.host, self.port)
        except BaseException as exc:  # handed to the starting thread, which raises it
            self.error = exc
            self.started.set()
            return
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        self.started.set()
        try:
            await self._stopping.wait()
        finally:
            await self.server.stop()

    def shutdown(self) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        self.join(timeout=_START_TIMEOUT)


@contextmanager
def run_in_thread(
    graph: SiteGraph | None = None,
    *,
    latency: float = 0.0,
    access_log_path: str | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
) -> Iterator[SyntheticWeb]:
    """A running SyntheticWeb (with .port set) for the duration of a with block.

    It has its own event loop in a daemon thread, so sync tests and async tests
    (whose loop it would otherwise share) can both use it.
    """
    server = SyntheticWeb(graph if graph is not None else SiteGraph(), latency, access_log_path)
    thread = _ServerThread(server, host, port)
    thread.start()
    if not thread.started.wait(_START_TIMEOUT):
        raise TimeoutError("synthetic web did not start")
    if thread.error is not None:
        raise thread.error
    try:
        yield server
    finally:
        thread.shutdown()


# ------------------------------------------------------------------------ CLI


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m nadird.testing.web", description="Serve the synthetic web."
    )
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--pages", type=int, default=200, help="HTML pages per host")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per response")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--links-per-page", type=int, default=8)
    parser.add_argument("--filler-kb", type=int, default=0)
    parser.add_argument("--access-log", default=None, help="append JSON lines to this file")
    parser.add_argument(
        "--catalog", type=int, default=0, help="products of the JSON catalog (/api/products)"
    )
    return parser.parse_args(argv)


async def _serve_until_signalled(
    server: SyntheticWeb, host: str, port: int, describe: Callable[[int], dict[str, object]]
) -> None:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    bound = await server.start(host, port)
    try:
        # The one line a parent process waits for; it must see it at once.
        print(json.dumps(describe(bound)), flush=True)
        await stopping.wait()
    finally:
        await server.stop()


def serve_until_signalled(
    server: SyntheticWeb, host: str, port: int, describe: Callable[[int], dict[str, object]]
) -> int:
    """Serve until SIGINT or SIGTERM, after printing `describe(port bound)` as
    one JSON line: the command-line servers' main loop (this module's,
    living.py's, news_serve.py's). 1 when the address or the access log
    cannot be used, said on stderr."""
    try:
        asyncio.run(_serve_until_signalled(server, host, port, describe))
    except OSError as exc:  # port taken, bad address, unwritable log
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        graph = SiteGraph(
            hosts=args.hosts,
            pages=args.pages,
            links_per_page=args.links_per_page,
            seed=args.seed,
            filler_kb=args.filler_kb,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    server = SyntheticWeb(graph, latency=args.latency, access_log_path=args.access_log)
    if args.catalog > 0:
        Catalog(count=args.catalog, seed=args.seed).mount(server)
    return serve_until_signalled(
        server,
        args.host,
        args.port,
        lambda port: {"port": port, "hosts": graph.hosts, "seeds": graph.seeds()},
    )


if __name__ == "__main__":
    sys.exit(main())
