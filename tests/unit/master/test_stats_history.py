"""The master's ring of samples (observe/history.py) and /api/stats/history
over a real master: bounded rings, rates from counters, gaps, the token."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from support.console_helpers import TOKEN, config, http, login, running_master

from nadird.config import ConsoleConfig
from nadird.master.observe.history import Sample, StatsHistory


def sample(at: float, stored: int, **errors: int) -> Sample:
    return Sample(at, stored, Sample.errors_of(errors), 5, 1, 0, 0)


def test_rates_come_from_consecutive_counters_and_a_gap_has_none() -> None:
    history = StatsHistory(every=10.0)
    for at, stored in ((0, 0), (10, 50), (20, 150), (200, 160), (210, 170)):
        history.add(sample(at, stored, timeout=stored // 10))
    hour = history.series("hour")
    assert hour["samples"] == 5 and hour["time"] == [0, 10, 20, 200, 210]
    # The first sample has nothing before it; 200 s is past 3 steps: a gap.
    assert hour["pages_per_s"] == [None, 5.0, 10.0, None, 1.0]
    assert hour["errors_per_s"] == {"timeout": [None, 0.5, 1.0, None, 0.1]}
    assert hour["queued"] == [5] * 5


def test_the_rings_are_bounded_and_the_coarse_one_keeps_every_nth() -> None:
    history = StatsHistory(every=1.0, fine=6, coarse_every=3, coarse=4)
    for at in range(20):
        history.add(sample(at, at))
    assert history.series("hour")["time"] == [14, 15, 16, 17, 18, 19]
    day = history.series("day")
    assert day["time"] == [9, 12, 15, 18] and day["step"] == 3.0
    assert day["pages_per_s"] == [None, 1.0, 1.0, 1.0]


def test_the_most_frequent_kinds_are_named_and_the_rest_is_other() -> None:
    history = StatsHistory(every=1.0)
    history.add(sample(0, 0))
    kinds = {f"kind{i}": i + 1 for i in range(7)}
    history.add(sample(1, 0, **kinds))
    errors = history.series("hour")["errors_per_s"]
    assert list(errors) == ["kind6", "kind5", "kind4", "kind3", "kind2", "other"]
    assert errors["other"] == [None, 3.0]  # kind0 and kind1: 1 + 2


def test_due_spaces_the_samples() -> None:
    history = StatsHistory(every=10.0)
    assert [history.due(t) for t in (0.0, 5.0, 10.0, 12.0, 20.5)] == [
        True, False, True, False, True,
    ]  # fmt: skip


async def test_the_api_serves_the_samples_with_the_token_or_a_session(tmp_path: Path) -> None:
    cfg = config(tmp_path, console=ConsoleConfig(history_every=0.1))
    async with running_master(cfg) as master:
        assert master.api is not None
        url = master.api.url + "/api/stats/history"
        for _ in range(100):  # the housekeeping tick samples (lease_ttl 1 s: every 0.25 s)
            if len(master.history.fine) >= 3:
                break
            await asyncio.sleep(0.1)
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        async with aiohttp.ClientSession() as client:
            async with client.get(url) as response:
                assert response.status == 401
            async with client.get(url, headers=bearer) as response:
                hour = await response.json()
            async with client.get(url + "?window=week", headers=bearer) as response:
                assert response.status == 400 and "hour, day" in (await response.json())["error"]
        assert hour["samples"] >= 3 and len(hour["time"]) == hour["samples"]
        assert hour["time"] == sorted(hour["time"]) and hour["pages_per_s"][0] is None
        assert set(hour) >= {"queued", "leases", "revisits_due", "revisits_late", "errors_per_s"}
        async with http() as browser:
            await login(browser, master.api.url)
            async with browser.get(url + "?window=day") as response:
                assert response.status == 200 and (await response.json())["window"] == "day"
