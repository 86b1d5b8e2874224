"""The limit on wrong sign-in tokens: the sliding window and the bounded table
(pure logic, a clock of the test's own), then over real HTTP against a
master in this process: 429 with Retry-After, the log and /metrics."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families
from support.console_helpers import TOKEN, config, field, http, login, running_master

from nadird.common.logs import configure
from nadird.config import ConsoleConfig
from nadird.master.console.browser_sessions import SESSION_COOKIE, same
from nadird.master.console.login_limit import LoginLimit, client_key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_window_slides_one_try_at_a_time() -> None:
    clock = Clock()
    limit = LoginLimit(failures=2, window=10.0, clients=100, clock=clock)
    assert limit.failed("10.0.0.1") == 1
    clock.now += 5
    assert limit.retry_after("10.0.0.1") is None
    assert limit.failed("10.0.0.1") == 2
    assert limit.retry_after("10.0.0.1") == 5.0  # until the first is 10 s old
    assert limit.retry_after("10.0.0.2") is None  # another address is not held back
    clock.now += 5
    assert limit.retry_after("10.0.0.1") is None
    limit.failed("10.0.0.1")  # one more wrong try: held back again, until the second ages
    assert limit.retry_after("10.0.0.1") == 5.0
    limit.succeeded("10.0.0.1")
    assert limit.retry_after("10.0.0.1") is None and len(limit) == 0
    assert (limit.counts.failures, limit.counts.refused) == (3, 2)


def test_rotating_addresses_cannot_grow_the_table() -> None:
    limit = LoginLimit(failures=5, window=300.0, clients=50, clock=Clock())
    for n in range(10_000):
        limit.failed(f"10.{n // 65536}.{n // 256 % 256}.{n % 256}")
    assert len(limit) == 50 and limit.counts.evicted == 10_000 - 50
    limit.failed("192.0.2.1")
    limit.failed("10.0.39.15")  # the most recent of the rotation is still there
    assert len(limit) == 50
    for _ in range(4):
        limit.failed("192.0.2.1")
    assert limit.retry_after("192.0.2.1") is not None


def test_ipv6_clients_count_by_their_64_block() -> None:
    assert client_key("2001:db8:1:2:aaaa::1") == client_key("2001:db8:1:2:ffff::9")
    assert client_key("2001:db8:1:2::1") != client_key("2001:db8:1:3::1")
    assert client_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_key("192.0.2.7") == "192.0.2.7" and client_key(None) == "(unknown)"


def test_tokens_of_any_length_compare_by_digest() -> None:
    assert same("a" * 40, "a" * 40) and not same("a" * 39, "a" * 40)
    assert not same(None, "x") and not same("\udcff", "x")  # a stray surrogate: no crash


async def attempt(client: aiohttp.ClientSession, url: str, token: str) -> aiohttp.ClientResponse:
    async with client.get(url + "/ui/login") as form:
        nonce = field(await form.text(), "nonce")
    data = {"nonce": nonce, "token": token}
    return await client.post(url + "/ui/login", data=data, allow_redirects=False)


async def metric(client: aiohttp.ClientSession, url: str, name: str) -> float:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with client.get(url + "/metrics", headers=headers) as response:
        text = await response.text()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                return sample.value
    raise AssertionError(f"{name} not exported")


async def test_too_many_wrong_tokens_are_429_until_the_window_passes(tmp_path: Path) -> None:
    settings = ConsoleConfig(login_failures=3, login_window=60.0)
    cfg = dataclasses.replace(config(tmp_path), console=settings)
    log = io.StringIO()
    configure("master", "m1", "info", log, "json")
    async with running_master(cfg) as master, http() as client:
        assert master.api is not None and master.api.console is not None
        url, limit = master.api.url, master.api.console.limit
        clock = Clock()
        limit.clock = clock  # no sleeping through the window
        for _ in range(3):
            response = await attempt(client, url, "x" * len(TOKEN))
            assert response.status == 401
        clock.now += 20
        response = await attempt(client, url, TOKEN)  # even the right one: not read
        assert response.status == 429 and response.headers["Retry-After"] == "40"
        assert "try again in 40 s" in await response.text()
        assert SESSION_COOKIE not in response.cookies
        async with client.get(url + "/ui", allow_redirects=False) as page:
            assert page.status == 401  # no session was opened
        assert await metric(client, url, "nadird_console_login_failures_total") == 3
        assert await metric(client, url, "nadird_console_login_limited_total") == 1
        assert await metric(client, url, "nadird_console_login_clients") == 1
        clock.now += 40
        response = await login(client, url)
        assert response.status == 303 and SESSION_COOKIE in response.cookies
        assert await metric(client, url, "nadird_console_login_clients") == 0
    events = [json.loads(line) for line in log.getvalue().splitlines() if line.startswith("{")]
    refused = [e for e in events if e["event"] == "console_login_refused"]
    assert [e["failures"] for e in refused] == [1, 2, 3] and refused[0]["peer"] == "127.0.0.1"
    limited = [e for e in events if e["event"] == "console_login_limited"]
    assert len(limited) == 1 and limited[0]["retry_after"] == 40
