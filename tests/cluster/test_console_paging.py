"""The domain page's time with 100,000 domains (a real master in this process,
its API on loopback)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from support.console_helpers import config, http, login

from nadird.common.urls import fingerprint
from nadird.master.service.server import Master
from nadird.store.open import open_store

DOMAINS = 100_000


@pytest.mark.slow
async def test_the_domain_page_stays_fast_with_100000_domains(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    store = open_store(cfg.store.uri, cfg.store)
    await store.open()
    master = Master(cfg, store)
    rng = random.Random(3)
    urls = [f"http://d{n}.test/{i}" for n in range(DOMAINS) for i in range(1 + (n % 3 == 0))]
    master.core.admission.admit("default", urls, [fingerprint(u) for u in urls], 0)
    master.core.frontier.db.commit()
    for n in rng.sample(range(DOMAINS), 5000):
        master.core.page_log.failures[f"d{n}.test"] = rng.randint(1, 50)
    await master.start()
    assert master.api is not None and len(master.domain_queues()) == DOMAINS
    timings: dict[str, float] = {}
    try:
        async with http() as client:
            await login(client, master.api.url)
            for sort in ("queue", "errors", "name"):
                for page in ("1", "2000"):
                    start = time.perf_counter()
                    async with client.get(
                        f"{master.api.url}/ui/domains?sort={sort}&page={page}"
                    ) as response:
                        html = await response.text()
                    timings[f"{sort} page {page}"] = time.perf_counter() - start
                    assert response.status == 200 and html.count("<tr>") == 51
    finally:
        await master.stop()
        await store.close()
    print("domain page times (ms):", {k: round(v * 1000) for k, v in timings.items()})
    # A few tens of ms here; the bound leaves room for a loaded machine.
    assert max(timings.values()) < 1.5, timings
