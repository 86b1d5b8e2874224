"""A chat/webhook receiver on loopback for alert tests: it records every
request, and answers as told (ok, 500, or never), or as a DingTalk robot
that checks the `timestamp` and `sign` query parameters.

It runs on its own event loop in a daemon thread, so a master process, an
in-process sender and the test can all talk to it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web

Mode = Literal["ok", "fail", "hang"]
HANG_FOR = 30.0  # a hanging answer ends by itself after this
_START_TIMEOUT = 10.0


@dataclass(frozen=True)
class Received:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic()

    def json(self) -> Any:
        return json.loads(self.body)


class AlertReceiver:
    def __init__(self, mode: Mode = "ok", dingtalk_secret: str | None = None) -> None:
        self.mode: Mode = mode  # may be changed while it runs
        self.dingtalk_secret = dingtalk_secret
        self.received: list[Received] = []  # requests it took (answered 2xx)
        self.attempts = 0  # every request, whatever the answer
        self.bad_signatures = 0
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.attempts += 1
        body = await request.read()
        if self.mode == "fail":
            return web.Response(status=500, text="receiver told to fail")
        if self.mode == "hang":
            await asyncio.sleep(HANG_FOR)
        if self.dingtalk_secret is not None and not self._signed(request):
            self.bad_signatures += 1
            return web.json_response({"errcode": 310000, "errmsg": "sign not match"})
        self.received.append(
            Received(
                request.path, dict(request.query), dict(request.headers), body, time.monotonic()
            )
        )
        return web.json_response({"errcode": 0, "errmsg": "ok"})

    def _signed(self, request: web.Request) -> bool:
        """DingTalk's check: the timestamp is within an hour, and sign is the
        base64 HMAC-SHA256 of "{timestamp}\\n{secret}" keyed by the secret."""
        assert self.dingtalk_secret is not None
        stamp, sign = request.query.get("timestamp", ""), request.query.get("sign", "")
        if not stamp.isdigit() or abs(time.time() * 1000 - int(stamp)) > 3_600_000:
            return False
        key = self.dingtalk_secret.encode()
        digest = hmac.new(key, f"{stamp}\n{self.dingtalk_secret}".encode(), hashlib.sha256)
        return hmac.compare_digest(base64.b64encode(digest.digest()).decode(), sign)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def payloads(self) -> list[Any]:
        return [r.json() for r in self.received]

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@contextmanager
def receiver_in_thread(receiver: AlertReceiver) -> Iterator[AlertReceiver]:
    loop = asyncio.new_event_loop()
    started = threading.Event()
    stopping: list[asyncio.Event] = []

    async def serve() -> None:
        await receiver.start()
        stopping.append(asyncio.Event())
        started.set()
        await stopping[0].wait()
        await receiver.stop()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    if not started.wait(_START_TIMEOUT):
        raise TimeoutError("alert receiver did not start")
    try:
        yield receiver
    finally:
        loop.call_soon_threadsafe(stopping[0].set)
        thread.join(_START_TIMEOUT)
        loop.close()
