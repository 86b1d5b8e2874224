"""Business keys (job item_key): how a key is made, and the keyed items both
stores keep, one per (job, key) across URLs, upserted by fetch time."""

from __future__ import annotations

import asyncio
from pathlib import Path

from support.keyed_items_helpers import _three_urls_then_a_recrawl
from support.mongo_helpers import make_store, sync_db

# ----------------------------------------------------------------- keys


# ------------------------------------------------------ merging a batch


# -------------------------------------------------------------- SQLite


# ------------------------------------------------------------- MongoDB


def test_mongodb_keeps_one_item_per_key_and_a_recrawl_updates_it(
    mongo_uri: str, tmp_path: Path
) -> None:
    async def main() -> None:
        store = make_store(mongo_uri, tmp_path)
        await store.open()
        try:
            await _three_urls_then_a_recrawl(store)
        finally:
            await store.close()

    asyncio.run(main())
    with sync_db(mongo_uri) as db:
        index = db.keyed_items.index_information()["job_key"]
        docs = list(db.keyed_items.find({"job": "shop"}))
    assert index["key"] == [("job", 1), ("key", 1)] and index["unique"] is True
    assert len(docs) == 1 and docs[0]["key"] == "A1" and len(docs[0]["urls"]) == 4
