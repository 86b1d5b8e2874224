"""The master's management API: stats, nodes, domains, seeds, jobs, metrics.

aiohttp on loopback by default. Every route except /healthz needs the bearer
token (compared in constant time, never logged). Request bodies are limited
and validated; a bad one gets 400 with a message. The web console (/ui,
nadird/console) is served here too, with sessions of its own; a console
session (its cookie with its origin's key: the cookie alone is refused, see
console/browser_sessions.py) may also GET the JSON routes (its pages refresh
from /api/stats).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from nadird.common.errors import BindError
from nadird.common.logs import get_logger
from nadird.config.api_token import load_token
from nadird.master import console
from nadird.master.console.browser_sessions import same
from nadird.master.frontier.seen import write_atomic
from nadird.master.observe.history import WINDOWS
from nadird.master.view import status
from nadird.master.view.api_body import (
    BadBody,
    SeedItem,
    parse_seeds,
    read_json,
    require_no_body,
)

if TYPE_CHECKING:
    from nadird.master.view.view import MasterView

log = get_logger()
OPEN_PATHS = frozenset({"/healthz"})


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=lambda d: json.dumps(d, default=str))


def _error(status: int, message: str) -> web.Response:
    return _json({"error": message}, status)


def _no_route(request: web.Request, exc: web.HTTPException) -> web.Response:
    """An API client reads JSON, also when the route or the method is wrong."""
    if exc.status == 404:
        answer = _error(404, f"no such route: {request.path} (see /api/openapi.yaml)")
    else:
        answer = _error(exc.status, f"{request.method} is not allowed on {request.path}")
        answer.headers["Allow"] = exc.headers.get("Allow", "")
    return answer


def _refusal(item: SeedItem, reason: str) -> dict[str, Any]:
    return {"index": item.index, "url": item.url, "job": item.job, "reason": reason}


class ApiServer:
    def __init__(self, master: MasterView) -> None:
        self.master = master
        self.api = master.config.api
        self.token = load_token(self.api, master.config.master.state_dir, create=True)
        self.url = ""
        self._runner: web.AppRunner | None = None
        self.console: console.ConsoleApp | None = None

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._auth], client_max_size=self.api.max_body_bytes)
        self.console = console.register(app, self.master, self.token)
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get("/api/stats", self.stats)
        app.router.add_get("/api/stats/history", self.stats_history)
        app.router.add_get("/api/nodes", self.nodes)
        app.router.add_get("/api/domains/{domain}", self.domain)
        app.router.add_post("/api/seeds", self.seeds)
        app.router.add_post("/api/jobs/{job}/pause", self.pause)
        app.router.add_post("/api/jobs/{job}/resume", self.resume)
        app.router.add_delete("/api/jobs/{job}", self.delete_job)
        app.router.add_get("/api/openapi.yaml", self.openapi)
        app.router.add_get("/metrics", self.metrics)
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.api.host, self.api.port)
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            address = f"{self.api.host}:{self.api.port}"
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise BindError(address, "api.host/api.port", reason) from None
        port = self._runner.addresses[0][1]  # the real port when 0 was asked for
        host = self.api.host if ":" not in self.api.host else f"[{self.api.host}]"
        self.url = f"http://{host}:{port}"
        state = Path(self.master.config.master.state_dir)
        # Whole or absent: the CLI's client reads it while the master starts.
        write_atomic(state / "api.json", json.dumps({"url": self.url}).encode())
        log.info("api_started", url=self.url)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def _allowed(self, request: web.Request) -> bool:
        if request.path in OPEN_PATHS or console.owns(request.path):
            return True  # the console checks its sessions itself
        given = request.headers.get("Authorization", "")
        if same(given, f"Bearer {self.token}"):
            return True
        # A console session reads (never changes) through the API.
        reading = request.method in ("GET", "HEAD")
        return reading and self.console is not None and self.console.session_of(request) is not None

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if not self._allowed(request):
            return _error(401, "missing or wrong bearer token")
        try:
            response: web.StreamResponse = await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"request body over {self.api.max_body_bytes} bytes")
        except BadBody as exc:
            return _error(400, str(exc))
        except (web.HTTPNotFound, web.HTTPMethodNotAllowed) as exc:
            if not request.path.startswith("/api/"):
                raise
            return _no_route(request, exc)
        return response

    # -------------------------------------------------------------- routes
    async def healthz(self, _request: web.Request) -> web.Response:
        """200 while every master loop runs, the master can write its state and
        its replica (master.replica) is within master.replica_max_lag and
        held by no other master; 503 (with what fails) otherwise."""
        health = self.master.health
        failure = self.master.loop_failure()  # a loop ended: the process is stopping
        behind = self.master.replica_behind()
        superseded = self.master.replica_superseded()  # the master is stopping
        if health.healthy and failure is None and behind is None and superseded is None:
            return _json({"ok": True})
        body: dict[str, Any] = {"ok": False}
        if failure is not None:
            body["error"] = failure
        if superseded is not None:
            body["superseded"] = superseded
        if not health.healthy:
            body["state"] = health.status()
        if behind is not None:
            body["replica"] = behind
        return _json(body, 503)

    async def stats(self, _request: web.Request) -> web.Response:
        return _json(status.full(self.master))

    async def stats_history(self, request: web.Request) -> web.Response:
        """The last hour (or `?window=day`) of samples, as columns (observe/history.py)."""
        window = request.query.get("window", "hour")
        if window not in WINDOWS:
            return _error(400, f"window must be one of {', '.join(WINDOWS)}, not {window!r}")
        return _json(self.master.history.series(window))

    async def nodes(self, _request: web.Request) -> web.Response:
        return _json({"nodes": status.nodes(self.master)})

    async def domain(self, request: web.Request) -> web.Response:
        name = request.match_info["domain"].lower()
        info = status.domain(self.master, name)
        if info is None:
            return _error(404, f"domain never seen by this master: {name}")
        return _json(info)

    async def seeds(self, request: web.Request) -> web.Response:
        items, job = parse_seeds(await read_json(request))
        jobs = self.master.jobs()
        if job not in jobs:
            raise BadBody(f"unknown job {job!r}; expected one of: {', '.join(sorted(jobs))}")
        known = [item for item in items if item.job in jobs]
        refused = [_refusal(i, f"unknown job {i.job!r}") for i in items if i.job not in jobs]
        invalid: list[tuple[int, str]] = []
        admitted = self.master.admit_seeds([(i.spec(), i.job) for i in known], invalid)
        refused += [_refusal(known[at], reason) for at, reason in invalid]
        refused.sort(key=lambda refusal: refusal["index"])
        return _json({"admitted": admitted, "submitted": len(items), "refused": refused})

    def _job(self, request: web.Request) -> str | None:
        job = request.match_info["job"]
        return job if job in self.master.jobs() else None

    async def pause(self, request: web.Request) -> web.Response:
        return await self._on_job(request, self._pause)

    async def resume(self, request: web.Request) -> web.Response:
        return await self._on_job(request, self._resume)

    async def delete_job(self, request: web.Request) -> web.Response:
        return await self._on_job(request, self._delete)

    async def _on_job(
        self, request: web.Request, action: Callable[[str], dict[str, Any]]
    ) -> web.Response:
        """A job control route: no body, a known job, then the action's answer."""
        await require_no_body(request)
        job = self._job(request)
        if job is None:
            return _error(404, "unknown job")
        return _json({"job": job, **action(job)})

    def _pause(self, job: str) -> dict[str, Any]:
        self.master.pause_job(job)
        log.info("job_paused", job=job)
        return {"paused": True}

    def _resume(self, job: str) -> dict[str, Any]:
        self.master.resume_job(job)
        log.info("job_resumed", job=job)
        return {"paused": False}

    def _delete(self, job: str) -> dict[str, Any]:
        dropped = self.master.delete_job(job)
        log.info("job_deleted", job=job, dropped=dropped)
        return {"deleted": True, "dropped_urls": dropped}

    async def openapi(self, _request: web.Request) -> web.Response:
        text = resources.files("nadird.master.service").joinpath("openapi.yaml").read_text("utf-8")
        return web.Response(text=text, content_type="application/yaml")

    async def metrics(self, _request: web.Request) -> web.Response:
        body = self.master.metrics_text()
        if self.console is not None:  # its own names (nadird_console_*): one exposition
            body += self.console.metrics_text()
        return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4"})
