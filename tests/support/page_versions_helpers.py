"""Page versions and their checks, for the page history tests of both stores."""

from __future__ import annotations

import dataclasses

from nadird.store.backend import Store
from nadird.store.base import PageRecord
from support.mongo_helpers import record


def _version(price: int, at: float, signature: str) -> PageRecord:
    base = record(1, job="shop", data={"title": "Kettle", "price": price})
    return dataclasses.replace(base, fetched_at=at, signature=signature)


async def _history(store: Store) -> list[dict[str, object]]:
    await store.open()
    try:
        plain = dataclasses.replace(record(2, job="shop"), signature=None)  # not revisited
        await store.write([_version(299, 100.0, "a"), plain])
        await store.write([_version(299, 200.0, "a")])  # unchanged: no version
        # A change, and the same page again (a refetch after a crash): one version.
        await store.write([_version(259, 300.0, "b")])
        await store.write([_version(259, 301.0, "b"), _version(249, 400.0, "c")])
        return [c async for c in store.iter_changes()]  # type: ignore[attr-defined]
    finally:
        await store.close()


def _check(changes: list[dict[str, object]]) -> None:
    assert [(c["previous_time"], c["time"], c["changes"]) for c in changes] == [
        (100.0, 300.0, {"price": {"old": 299, "new": 259}}),
        (300.0, 400.0, {"price": {"old": 259, "new": 249}}),
    ]
