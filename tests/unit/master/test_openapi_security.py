"""The OpenAPI document against the application the master serves: every
route is in it with the credentials it takes, and each route, asked over
real HTTP, accepts exactly those (a master in this process, on loopback).

The routes are read from the aiohttp router, never listed here: a route
added without documenting it fails the first test."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support.console_helpers import KEY, TOKEN, config, http, login, running_master

from nadird.config.yaml_strict import load_strict
from nadird.master.console.browser_sessions import KEY_HEADER, SESSION_COOKIE
from nadird.master.service.api import ApiServer
from nadird.master.service.server import Master

METHODS = ("get", "post", "put", "delete", "patch")
# Path parameters filled so that no request changes anything (unknown job and
# domain: 404), by parameter name; any other parameter gets "x".
SAMPLES = {"job": "no-such-job", "domain": "no-such.test", "name": "console.css"}


def document() -> dict[str, Any]:
    text = resources.files("nadird.master.service").joinpath("openapi.yaml").read_text("utf-8")
    doc: dict[str, Any] = load_strict(text)
    return doc


def served_routes(master: Master) -> set[tuple[str, str]]:
    """(method, path template) of every route of the API's application (a
    second application built like the served one; HEAD is GET's)."""
    app = ApiServer(master).app()
    routes = set()
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter")
        if route.method != "HEAD" and path is not None:
            routes.add((route.method.lower(), path))
    return routes


def requirement(doc: dict[str, Any], path: str, method: str) -> list[set[str]]:
    """The operation's alternatives, each a set of scheme names ([] = open)."""
    security = doc["paths"][path][method].get("security", doc["security"])
    return [set(alternative) for alternative in security]


@dataclass
class Served:
    master: Master
    url: str
    session: str  # a live console session's cookie value


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    async with running_master(config(tmp_path)) as master, http() as client:
        assert master.api is not None
        response = await login(client, master.api.url)
        yield Served(master, master.api.url, response.cookies[SESSION_COOKIE].value)


async def test_every_route_is_documented_with_schemes_that_exist(served: Served) -> None:
    doc = document()
    served_ops = served_routes(served.master)
    documented = {
        (method, path) for path, ops in doc["paths"].items() for method in ops if method in METHODS
    }
    assert len(served_ops) > 20
    assert served_ops - documented == set()  # a route nobody documented
    assert documented - served_ops == set()  # a documented route that is not there
    schemes = set(doc["components"]["securitySchemes"])
    assert schemes == {"bearer", "consoleSession", "consoleKey"}
    for method, path in served_ops:
        for alternative in requirement(doc, path, method):
            assert alternative <= schemes, (method, path)
    session = doc["components"]["securitySchemes"]["consoleSession"]
    assert (session["type"], session["in"], session["name"]) == ("apiKey", "cookie", SESSION_COOKIE)
    key = doc["components"]["securitySchemes"]["consoleKey"]
    assert (key["type"], key["in"], key["name"]) == ("apiKey", "header", KEY_HEADER)


# What a request may carry: the token, the console's cookie alone (what any
# server on another port of the host gets from the browser), its key alone,
# or both (what the console's script sends).
OFFERS = [{"bearer"}, {"consoleSession"}, {"consoleKey"}, {"consoleSession", "consoleKey"}]


def credentials(schemes: set[str], session: str) -> dict[str, str]:
    headers = {}
    if "bearer" in schemes:
        headers["Authorization"] = f"Bearer {TOKEN}"
    if "consoleSession" in schemes:
        headers["Cookie"] = f"{SESSION_COOKIE}={session}"
    if "consoleKey" in schemes:
        headers[KEY_HEADER] = KEY
    return headers


async def status_of(
    client: aiohttp.ClientSession, served: Served, method: str, path: str, schemes: set[str]
) -> int:
    filled = re.sub(r"\{(\w+)\}", lambda m: SAMPLES.get(m.group(1), "x"), path)
    headers = credentials(schemes, served.session)
    async with client.request(
        method, served.url + filled, headers=headers, allow_redirects=False
    ) as response:
        return response.status


async def test_each_route_takes_exactly_the_credentials_the_document_names(
    served: Served,
) -> None:
    doc = document()
    # No cookie jar: each request carries only the credential the test gives it.
    async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as client:
        for method, path in sorted(served_routes(served.master)):
            alternatives = requirement(doc, path, method)
            open_route = alternatives == [] or set() in alternatives
            without = await status_of(client, served, method, path, set())
            assert (without != 401) == open_route, (method, path, without)
            for offer in OFFERS:
                status = await status_of(client, served, method, path, offer)
                if open_route or any(needed <= offer for needed in alternatives):
                    assert status != 401, (method, path, offer, status)
                else:
                    assert status == 401, (method, path, offer, status)
    assert not served.master.jobs()["default"].paused  # nothing was changed
    assert served.master.status()["queued"] == 0
