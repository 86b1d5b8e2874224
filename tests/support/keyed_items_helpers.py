"""Pages with keyed items and a recrawl, for the keyed items tests of both stores."""

from __future__ import annotations

import dataclasses
from typing import Any

from nadird.common.urls import fingerprint
from nadird.store.base import PageRecord
from nadird.store.items import KeyedItem


def page(url: str, at: float, data: dict[str, Any], key: str | None = "A1") -> PageRecord:
    return PageRecord(
        url=url,
        fp=fingerprint(url),
        final_url=url,
        status=200,
        fetched_at=at,
        job="shop",
        depth=1,
        data=data,
        item_key=key,
    )


async def _items(store: Any, job: str | None = None) -> list[KeyedItem]:
    return [item async for item in store.iter_items(job)]


async def _three_urls_then_a_recrawl(store: Any) -> None:
    """What both stores must do with one product under three URLs."""
    await store.write(
        [
            page("http://s.test/item/1", 100.0, {"price": 5}),
            page("http://s.test/item/1?src=list", 101.0, {"price": 5}),
        ]
    )
    await store.write([page("http://s.test/p/1/slug", 102.0, {"price": 5})])
    (first,) = await _items(store)
    assert first.first_seen == 100.0 and first.updated_at == 102.0
    assert first.urls == [
        "http://s.test/item/1",
        "http://s.test/item/1?src=list",
        "http://s.test/p/1/slug",
    ]
    # A re-crawl: updated_at and the changed field move, first_seen stays.
    await store.write([page("http://s.test/item/1", 200.0, {"price": 6})])
    (again,) = await _items(store)
    assert (again.first_seen, again.updated_at, again.data) == (100.0, 200.0, {"price": 6})
    assert again.url == "http://s.test/item/1" and again.urls == first.urls
    # A late, older result adds nothing but its URL; a replay changes nothing.
    await store.write([page("http://s.test/old/1", 150.0, {"price": 1})])
    await store.write([page("http://s.test/item/1", 200.0, {"price": 6})])
    (late,) = await _items(store)
    assert (late.first_seen, late.updated_at, late.data) == (100.0, 200.0, {"price": 6})
    assert late.urls == [*first.urls, "http://s.test/old/1"]
    # Another job's item with the same key is another item.
    other = dataclasses.replace(page("http://s.test/item/1", 300.0, {"price": 7}), job="other")
    assert await store.upsert_items([other]) == 1
    assert [i.job for i in await _items(store)] == ["shop", "other"]
    assert [i.data for i in await _items(store, "other")] == [{"price": 7}]
    assert await store.count() == 4  # the pages stay one per URL
