"""The master's loops survive a failing step; a loop that ends anyway makes
the master unhealthy and its process exit non-zero."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import aiohttp
import pytest

from nadird.cli.daemon import serve
from nadird.config import ApiConfig, Config, MasterConfig, StoreConfig
from nadird.master.service.loops import LoopFailed, LoopGuard
from nadird.master.service.role import MasterRole
from nadird.master.service.server import Master
from nadird.store.open import open_store


def test_a_failing_loop_is_counted_and_started_again() -> None:
    async def scenario() -> tuple[Counter[str], int, bool]:
        stats: Counter[str] = Counter()
        guard = LoopGuard(stats)
        steps = 0

        async def loop() -> None:
            nonlocal steps
            while True:
                steps += 1
                if steps <= 5:
                    raise RecursionError("a frame too deep")
                await asyncio.sleep(0.01)

        guard.start("results", loop)
        # Until it ran again after its failures (bounded: a loaded machine
        # may not run it for a while, a broken guard never does).
        for _ in range(1000):
            if steps > 6:
                break
            await asyncio.sleep(0.01)
        await guard.stop()
        guard.raise_if_failed()  # stopping is not a failure
        return stats, steps, guard.healthy

    stats, steps, healthy = asyncio.run(scenario())
    assert stats["handler_errors"] == 5
    assert steps > 6 and healthy


def config(tmp: Path) -> Config:
    return Config(
        master=MasterConfig(
            bind=f"ipc://{tmp}/control",
            results_bind=f"ipc://{tmp}/results",
            state_dir=str(tmp / "state"),
            lease_ttl=1.0,
            heartbeat_interval=0.25,
            exit_when_done=False,
        ),
        store=StoreConfig(uri=f"sqlite:///{tmp}/store.db"),
        api=ApiConfig(port=0),
    )


def end_loop(name: str) -> None:
    """End one master loop as a bug past its guard would."""
    (task,) = [t for t in asyncio.all_tasks() if t.get_name() == name]
    task.cancel()


async def _health(master: Master) -> tuple[int, str]:
    assert master.api is not None
    token = master.api.token
    async with aiohttp.ClientSession() as http:
        async with http.get(master.api.url + "/healthz") as response:
            status = response.status
        headers = {"Authorization": f"Bearer {token}"}
        async with http.get(master.api.url + "/metrics", headers=headers) as response:
            metrics = await response.text()
    return status, metrics


def test_a_loop_that_ends_makes_the_master_unhealthy(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, str, int, str]:
        cfg = config(tmp_path)
        store = open_store(cfg.store.uri, cfg.store)
        await store.open()
        master = Master(cfg, store)
        await master.start()
        ok = await _health(master)
        end_loop("results")
        await asyncio.sleep(0.05)
        broken = await _health(master)
        assert master.failed.is_set()  # what the role finishes on
        await master.stop()  # in full, and then:
        with pytest.raises(LoopFailed, match="results loop ended"):
            master.loops.raise_if_failed()
        await store.close()
        return ok[0], ok[1], broken[0], broken[1]

    ok_status, ok_metrics, status, metrics = asyncio.run(scenario())
    assert ok_status == 200 and "nadird_loops_healthy 1.0" in ok_metrics
    assert status == 503 and "nadird_loops_healthy 0.0" in metrics


def test_the_daemon_exits_non_zero_when_a_master_loop_ends(tmp_path: Path) -> None:
    async def scenario() -> int:
        cfg = config(tmp_path)
        store = open_store(cfg.store.uri, cfg.store)
        await store.open()
        role = MasterRole(cfg, store)
        running = asyncio.ensure_future(serve(role, cfg, None))
        while role.master.api is None or not role.master.api.url:
            await asyncio.sleep(0.01)
        end_loop("control")
        code = await asyncio.wait_for(running, 20)
        await store.close()
        return code

    assert asyncio.run(scenario()) == 1
    assert (tmp_path / "state" / "seen.bloom").exists()  # it stopped in full
