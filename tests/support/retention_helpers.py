"""Shared by the history retention tests: a history of known times in a
store, the retention run over it with a clock the test sets, and what is
left, per URL."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from nadird.config import Config
from nadird.job.history import HistoryKeep
from nadird.job.spec import Job
from nadird.master.results.retention import TRIMMED, HistoryRetention
from nadird.store.backend import Store
from support.mongo_helpers import record

DAY = 86400.0
NOW = 1_800_000_000.0  # the test's wall clock
# URL number -> its versions' ages in days, oldest first (the last is the latest).
AGES = {
    1: [10.5, 9.5, 8.5, 6.5, 5.5, 4.5, 3.5, 2.5, 1.5, 0.5],
    2: [30.0],  # one old version: the latest, never trimmed
    3: [40.0, 35.0, 0.1],
}


def history_url(n: int) -> str:
    return str(record(n, job="shop").url)


async def fill_history(store: Store) -> None:
    """One write per version, as fetches would have made them."""
    longest = max(len(ages) for ages in AGES.values())
    for turn in range(longest):
        batch = []
        for n, ages in AGES.items():
            if turn < len(ages):
                at = NOW - ages[turn] * DAY
                base = record(n, job="shop", data={"price": turn})
                batch.append(dataclasses.replace(base, fetched_at=at, signature=f"{n}-{turn}"))
        await store.write(batch)


def retention(
    store: Store, clock: list[float], **keep: Any
) -> tuple[HistoryRetention, Counter[str]]:
    job = Job(name="shop", revisit={"every": "1h"}, history=HistoryKeep(**keep))
    config = Config(jobs={"shop": job})
    stats: Counter[str] = Counter()
    # A step deletes 2 versions at most: rounds of several steps, a URL over two.
    found = HistoryRetention(store, lambda: config, stats, lambda: clock[0], pause=0, limit=2)
    return found, stats


def ages_left(times: list[tuple[str, float]]) -> dict[int, list[float]]:
    """The versions left, as AGES writes them."""
    by_url: dict[int, list[float]] = {}
    for n in AGES:
        url = history_url(n)
        found = sorted((at for u, at in times if u == url), reverse=False)
        by_url[n] = [round((NOW - at) / DAY, 1) for at in found]
    return by_url


async def check_retention(store: Store, read: Any) -> None:
    """keep_for, then keep_versions too, then a clock moved far ahead; `read`
    gives the (url, time) of every version left."""
    clock = [NOW]
    await fill_history(store)
    by_age, stats = retention(store, clock, keep_for="7d")
    assert await by_age.round() == 5
    assert ages_left(read()) == {
        1: [6.5, 5.5, 4.5, 3.5, 2.5, 1.5, 0.5],
        2: [30.0],
        3: [0.1],
    }
    assert stats[TRIMMED] == 5
    assert await by_age.round() == 0  # nothing more to trim at this time
    both, stats = retention(store, clock, keep_for="7d", keep_versions=3)
    assert await both.round() == 4 and stats[TRIMMED] == 4
    assert ages_left(read())[1] == [2.5, 1.5, 0.5]
    clock[0] = NOW + 365 * DAY  # a year later: each URL keeps its latest version
    assert await both.round() == 2
    assert ages_left(read()) == {1: [0.5], 2: [30.0], 3: [0.1]}
