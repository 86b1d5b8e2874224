"""A running master whose replica another master took over (restored from it
and started elsewhere) stops: Litestream killed at once, /healthz 503 saying
why, and the role's stop raises SupersededError (exit status 3). Two masters
in one process on one file:// replica, with real Litestream children."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from nadird.common.errors import SupersededError
from nadird.config import ApiConfig, Config, MasterConfig, StoreConfig
from nadird.master.service.replica import litestream_binary
from nadird.master.service.replica_fetch import replica_generation
from nadird.master.service.role import MasterRole
from nadird.store.backend import Store
from nadird.store.open import open_store
from nadird.testing import forkserver

CHECK = 0.2  # master.replica_check_interval


def config(tmp: Path, name: str, replica: str) -> Config:
    return Config(
        master=MasterConfig(
            bind=f"ipc://{tmp}/control-{name}",
            results_bind=f"ipc://{tmp}/results-{name}",
            state_dir=str(tmp / f"state-{name}"),
            exit_when_done=False,
            replica=replica,
            replica_sync_interval=0.1,
            replica_check_interval=CHECK,
        ),
        store=StoreConfig(uri=f"sqlite:///{tmp}/state-{name}/pages.db"),
        api=ApiConfig(port=0),
    )


async def healthz(role: MasterRole) -> tuple[int, dict[str, object]]:
    api = role.master.api
    assert api is not None
    async with aiohttp.ClientSession() as http, http.get(api.url + "/healthz") as response:
        return response.status, json.loads(await response.text())


async def until(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await asyncio.to_thread(check):
            return True
        await asyncio.sleep(0.05)
    return False


def test_a_running_master_stops_once_a_master_restored_from_its_replica_starts(
    tmp_path: Path,
) -> None:
    binary = litestream_binary()
    assert binary is not None
    replica = (tmp_path / "replica").as_uri()

    async def scenario() -> None:
        old_config, new_config = config(tmp_path, "a", replica), config(tmp_path, "b", replica)
        old_store = await opened(old_config)
        old = MasterRole(old_config, old_store)
        await old.start()
        assert await until(lambda: replica_generation(binary, replica).n == 1, 20)
        into = ("--replica", replica, "--state-dir", new_config.master.state_dir)
        restored = forkserver.run([sys.executable, "-m", "nadird", "restore", *into], timeout=60)
        assert restored.returncode == 0, restored.stderr
        new_store = await opened(new_config)
        new = MasterRole(new_config, new_store)
        await new.start()  # takes generation 2, shipped within 0.1 s
        assert (await healthz(old))[0] == 200  # not yet read
        started = time.monotonic()
        assert await until(old.master.failed.is_set, 20)
        noticed = time.monotonic() - started
        assert old.done.is_set() or await until(old.done.is_set, 5)  # what the daemon stops on
        status, body = await healthz(old)
        assert status == 503
        why = str(body["superseded"])
        assert "generation 2" in why and "generation 1" in why and replica in why
        proc = old.master.replica._proc if old.master.replica else None
        assert proc is not None and proc.poll() is not None  # killed: no final sync
        with pytest.raises(SupersededError, match="generation 2"):
            await old.stop()
        # The master holding the replica goes on, and the replica stays its.
        assert (await healthz(new))[0] == 200
        assert replica_generation(binary, replica).n == 2
        await new.stop()
        for store in (old_store, new_store):
            await store.close()
        # Read every CHECK seconds: noticed within a few reads (litestream
        # restore of replica.db each), not after minutes.
        assert noticed < 10 * CHECK + 5, noticed

    asyncio.run(scenario())


async def opened(cfg: Config) -> Store:
    Path(cfg.master.state_dir).mkdir(parents=True, exist_ok=True)
    store = open_store(cfg.store.uri, cfg.store)
    await store.open()
    return store
