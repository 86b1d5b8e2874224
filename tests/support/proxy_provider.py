"""A proxy provider on loopback for tests: it hands out what it is told to,
as lines or JSON, or fails as told (500, garbage, a hang), and counts polls.

Like the providers people buy from, it may state each proxy's end of life
(`expire_time` in the JSON answer). It runs on its own event loop in a
daemon thread, so worker processes and the test can all reach it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal
from zoneinfo import ZoneInfo

from aiohttp import web

Mode = Literal["ok", "fail", "garbage", "hang"]
HANG_FOR = 30.0  # a hanging answer ends by itself after this
_START_TIMEOUT = 10.0


class ProxyProvider:
    def __init__(self, proxies: list[str] | None = None, key: str = "") -> None:
        self.proxies = list(proxies or [])  # "host:port" entries handed out; may change
        self.lifetime: float | None = None  # seconds stated per proxy (JSON answers)
        self.timezone = "Asia/Shanghai"  # of the local times it writes, as many providers do
        self.mode: Mode = "ok"
        self.key = key  # when set, a poll without ?key=<key> gets a 403
        self.polls = 0
        self.refused = 0  # polls with a wrong key
        self.port = 0
        self._runner: web.AppRunner | None = None

    def url(self, path: str = "/get") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def _lines(self, request: web.Request) -> web.StreamResponse:
        failed = await self._failure(request)
        return failed or web.Response(text="\n".join(self.proxies) + "\n")

    async def _json(self, request: web.Request) -> web.StreamResponse:
        failed = await self._failure(request)
        if failed is not None:
            return failed
        items = []
        for entry in self.proxies:
            host, _, port = entry.rpartition(":")
            item: dict[str, object] = {"ip": host, "port": int(port)}
            if self.lifetime is not None:
                end = dt.datetime.now(ZoneInfo(self.timezone)) + dt.timedelta(seconds=self.lifetime)
                item["expire_time"] = end.strftime("%Y-%m-%d %H:%M:%S")
            items.append(item)
        return web.json_response({"code": 0, "data": items})

    async def _failure(self, request: web.Request) -> web.StreamResponse | None:
        self.polls += 1
        if self.key and request.query.get("key") != self.key:
            self.refused += 1
            return web.Response(status=403, text="bad key")
        if self.mode == "fail":
            return web.Response(status=500, text="provider told to fail")
        if self.mode == "garbage":
            return web.Response(body=b"\x00\xffnot a proxy\n<html>" + json.dumps([1]).encode())
        if self.mode == "hang":
            await asyncio.sleep(HANG_FOR)
        return None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/get", self._lines)
        app.router.add_get("/json", self._json)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@contextmanager
def provider_in_thread(provider: ProxyProvider) -> Iterator[ProxyProvider]:
    loop = asyncio.new_event_loop()
    started = threading.Event()
    stopping: list[asyncio.Event] = []

    async def serve() -> None:
        await provider.start()
        stopping.append(asyncio.Event())
        started.set()
        await stopping[0].wait()
        await provider.stop()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    if not started.wait(_START_TIMEOUT):
        raise TimeoutError("proxy provider did not start")
    try:
        yield provider
    finally:
        loop.call_soon_threadsafe(stopping[0].set)
        thread.join(_START_TIMEOUT)
        loop.close()
