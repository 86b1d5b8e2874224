"""A console client for tests: a master config with a known token, a cookie
jar that keeps 127.0.0.1's cookies, the origin's key in every request (as
console.js sends it), and the sign-in a browser would do."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp

from nadird.config import ApiConfig, Config, ConsoleConfig, MasterConfig, StoreConfig
from nadird.config.alerts import AlertsConfig
from nadird.master.console.browser_sessions import KEY_HEADER
from nadird.master.service.server import Master
from nadird.store.open import open_store

TOKEN = "console-test-token-0123456789"
KEY = "k" * 43  # the origin's key, as console.js makes and sends it


def config(
    tmp: Path, alerts: AlertsConfig | None = None, console: ConsoleConfig | None = None
) -> Config:
    return Config(
        node="m1",
        master=MasterConfig(
            bind=f"ipc://{tmp}/control",
            results_bind=f"ipc://{tmp}/results",
            state_dir=str(tmp / "state"),
            lease_ttl=1.0,
            heartbeat_interval=0.25,
            exit_when_done=False,
        ),
        store=StoreConfig(uri=f"sqlite:///{tmp}/store.db"),
        api=ApiConfig(port=0, token=TOKEN),
        alerts=alerts or AlertsConfig(),
        console=console or ConsoleConfig(),
    )


@asynccontextmanager
async def running_master(cfg: Config) -> AsyncIterator[Master]:
    """A real master (its API and console on a loopback port) in this process."""
    store = open_store(cfg.store.uri, cfg.store)
    await store.open()
    master = Master(cfg, store)
    await master.start()
    try:
        yield master
    finally:
        await master.stop()
        await store.close()


def http(key: str | None = KEY) -> aiohttp.ClientSession:
    """A browser with the console's script (`key`), or a plain client (None)."""
    headers = {} if key is None else {KEY_HEADER: key}
    # unsafe=True: keep cookies of an IP address (127.0.0.1), as a browser does.
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True), headers=headers)


def field(html: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]+)"', html)
    assert found is not None, f"no {name} field"
    return found.group(1)


async def login(
    client: aiohttp.ClientSession, url: str, token: str = TOKEN
) -> aiohttp.ClientResponse:
    async with client.get(url + "/ui/login") as response:
        nonce = field(await response.text(), "nonce")
    return await client.post(
        url + "/ui/login", data={"nonce": nonce, "token": token}, allow_redirects=False
    )
