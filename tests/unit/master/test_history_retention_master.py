"""A running master applies the jobs' history retention on its own, and
counts what it trimmed (status stats and /metrics)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import aiohttp
from support.retention_helpers import AGES, fill_history

from nadird.config import ApiConfig, Config, MasterConfig, StoreConfig
from nadird.job.history import HistoryKeep
from nadird.job.spec import Job
from nadird.master.service.server import Master
from nadird.store.open import open_store


def test_a_running_master_trims_the_history_and_counts_it(tmp_path: Path) -> None:
    job = Job(name="shop", revisit={"every": "1h"}, history=HistoryKeep(keep_versions=1))
    cfg = Config(
        master=MasterConfig(
            bind=f"ipc://{tmp_path}/control",
            results_bind=f"ipc://{tmp_path}/results",
            state_dir=str(tmp_path / "state"),
            history_trim_interval=0.05,
        ),
        store=StoreConfig(uri=f"sqlite:///{tmp_path}/store.db"),
        api=ApiConfig(port=0),
        jobs={"shop": job},
    )

    async def scenario() -> tuple[int, str]:
        store = open_store(cfg.store.uri, cfg.store)
        await store.open()
        await fill_history(store)
        master = Master(cfg, store)
        await master.start()
        try:
            for _ in range(200):
                if master.core.stats["history_trimmed"]:
                    break
                await asyncio.sleep(0.05)
            assert master.api is not None
            headers = {"Authorization": f"Bearer {master.api.token}"}
            url = master.api.url + "/metrics"
            async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as answer:
                metrics = await answer.text()
            assert master.status()["history_trimmed"] == master.core.stats["history_trimmed"]
            return master.core.stats["history_trimmed"], metrics
        finally:
            await master.stop()
            await store.close()

    trimmed, metrics = asyncio.run(scenario())
    assert trimmed == sum(len(ages) - 1 for ages in AGES.values())
    assert f"nadird_history_trimmed_total {float(trimmed)}" in metrics
    with sqlite3.connect(tmp_path / "store.db") as conn:
        per_url = conn.execute("SELECT count(*) FROM changes GROUP BY url").fetchall()
    assert per_url == [(1,)] * len(AGES)
