"""Histories and reference pairing for the `export --changes` tests of both stores."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from itertools import groupby, pairwise
from typing import Any

from nadird.store.base import PageRecord
from nadird.store.history import field_changes
from support.mongo_helpers import record

Change = dict[str, Any]


# (job, url, time, tie-break, data): a stored version, as read back raw.
Raw = tuple[str, str, float, Any, dict[str, Any]]


T0 = 1_700_000_000.0


def _version(url_no: int, job: str, at: float, data: dict[str, Any]) -> PageRecord:
    base = record(url_no, job=job, data=data)
    return dataclasses.replace(base, fetched_at=at, signature=json.dumps(data, sort_keys=True))


def _random_history(seed: int, count: int) -> list[list[PageRecord]]:
    """`count` batches of versions: 12 URLs, some in two jobs whose versions
    interleave in time, some with two versions at one time; most fetches
    change a field, some change nothing (no version)."""
    rng = random.Random(seed)
    batches: list[list[PageRecord]] = []
    clock = T0
    for _ in range(count):
        batch = []
        for _ in range(rng.randint(1, 6)):
            clock += rng.choice((0.0, 0.25, 1.0, 7.5))  # 0: a tie with the one before
            job = rng.choice(("a", "a", "b"))
            data = {"price": rng.randint(1, 3), "title": rng.choice(("K", "L"))}
            batch.append(_version(rng.randint(0, 11), job, clock, data))
        batches.append(batch)
    return batches


def _reference(raw: list[Raw], job: str | None, since: float | None) -> list[Change]:
    """What the export must print: the whole history in memory, each version
    paired with the one before it of its job and URL."""
    found: list[Change] = []
    chosen = sorted(v for v in raw if job is None or v[0] == job)
    for _, group in groupby(chosen, key=lambda v: (v[0], v[1])):
        versions = list(group)
        for old, new in pairwise(versions):
            if since is None or new[2] >= since:
                found.append(
                    {
                        "url": new[1],
                        "job": new[0],
                        "time": new[2],
                        "previous_time": old[2],
                        "changes": field_changes(old[4], new[4]),
                    }
                )
    return found


def _filters(raw: list[Raw]) -> list[tuple[str | None, float | None]]:
    """Jobs and times to filter on: none, each job, a job with no versions;
    before everything, a version's own time (`since` keeps it), between two
    times, after everything."""
    times = sorted({v[2] for v in raw})
    middle = times[len(times) // 2]
    sinces = [None, T0 - 1, middle, middle + 0.125, times[-1] + 1]
    return [(job, since) for job in (None, "a", "b", "none") for since in sinces]


async def _check_against_reference(
    store: Any,
    raw_of: Callable[[], list[Raw]],
    chunks: tuple[int, ...],
    batches: int = 40,
    step: int = 1,
) -> None:
    await store.open()
    try:
        for batch in _random_history(7, batches):
            await store.write(batch)
        raw = raw_of()
        assert len(raw) > batches and len({(v[0], v[1]) for v in raw}) > 12  # URLs in both jobs
        for job, since in _filters(raw)[::step]:
            expected = _reference(raw, job, since)
            for chunk in chunks:
                found = [c async for c in store.iter_changes(job, since, chunk=chunk)]
                assert found == expected, (job, since, chunk)
    finally:
        await store.close()


async def _interleaved(store: Any) -> list[list[Change]]:
    """One URL crawled by two jobs, their versions alternating in time; the
    chunk boundary (2 versions) falls inside each job's versions."""
    await store.open()
    try:
        for n, job in enumerate(("a", "b", "a", "b", "a")):
            await store.write([_version(1, job, T0 + n, {"price": n})])
        return [
            [c async for c in store.iter_changes(job, since, chunk=2)]
            for job, since in ((None, None), ("b", None), (None, T0 + 4))
        ]
    finally:
        await store.close()


def _check_interleaved(every: list[Change], of_b: list[Change], latest: list[Change]) -> None:
    # Each job's versions paired among themselves, job by job (reading by
    # URL then time alone would pair a's with b's and find no change).
    assert [(c["job"], c["previous_time"] - T0, c["time"] - T0) for c in every] == [
        ("a", 0, 2),
        ("a", 2, 4),
        ("b", 1, 3),
    ]
    assert of_b == every[2:] and of_b[0]["changes"] == {"price": {"old": 1, "new": 3}}
    # --since: the old side is the version before `since`, of the same job.
    assert latest == every[1:2] and latest[0]["changes"] == {"price": {"old": 2, "new": 4}}


async def _empty(store: Any) -> list[list[Change]]:
    await store.open()
    try:
        once = _version(1, "a", T0, {"price": 1})  # a first version is no change
        found = [[c async for c in store.iter_changes()]]
        await store.write([once])
        for job, since in ((None, None), ("a", T0 - 10), ("a", T0), ("b", None)):
            found.append([c async for c in store.iter_changes(job, since, chunk=1)])
        return found
    finally:
        await store.close()
