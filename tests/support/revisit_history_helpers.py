"""Reading a store's latest changes for the page history tests."""

from __future__ import annotations

import dataclasses

from nadird.store.backend import Store
from nadird.store.base import PageRecord
from support.mongo_helpers import record


async def _latest_changes(store: Store) -> None:
    def version(n: int, price: int, at: float) -> PageRecord:
        base = record(n, job="shop", data={"price": price})
        return dataclasses.replace(base, fetched_at=at, signature=f"{n}-{price}")

    await store.open()
    try:
        await store.write([version(1, 10, 100.0), version(2, 5, 150.0)])  # first versions
        await store.write([version(1, 11, 300.0), version(2, 6, 350.0)])
        await store.write([version(1, 12, 400.0), version(3, 1, 450.0)])
        every = [c async for c in store.iter_changes()]  # type: ignore[attr-defined]
        recent = await store.recent_changes(10)  # type: ignore[attr-defined]
        latest = await store.recent_changes(2)  # type: ignore[attr-defined]
    finally:
        await store.close()
    assert recent == sorted(every, key=lambda c: -float(c["time"]))
    assert [(c["time"], c["previous_time"]) for c in recent] == [
        (400.0, 300.0),
        (350.0, 150.0),
        (300.0, 100.0),
    ]
    assert latest == recent[:2] and latest[0]["changes"] == {"price": {"old": 11, "new": 12}}
