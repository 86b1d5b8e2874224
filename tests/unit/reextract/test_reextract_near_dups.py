"""`nadird reextract` decides near-duplicates from the store's own records:
the first page of a text is the one fetched first (whatever the store's
order), a copy gets its URL, a page that is no longer a copy loses it, and a
second run writes nothing. Against a real SQLite file, in-process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from support.articles.wire import COPIES, OTHER
from support.reextract_helpers import WIRE_FIRST as ORIGINAL
from support.reextract_helpers import wire_records as records

from nadird.job.spec import Job
from nadird.reextract.core import Rules
from nadird.reextract.run import Options, reextract
from nadird.store.sqlite.store import SqliteStore

HTML = ["text/html"]


def run_twice(path: Path, job: Job) -> tuple[Any, Any, dict[str, Any]]:
    async def go() -> tuple[Any, Any, dict[str, Any]]:
        store = SqliteStore(str(path))
        await store.open()
        try:
            await store.write(records())
            rules = Rules.of(job, HTML)
            first = await reextract(store, rules, Options(chunk=2), asyncio.Event())
            second = await reextract(store, rules, Options(chunk=2), asyncio.Event())
            pages = await store.read_pages(job.name, None, None, 100)
            stored = {p.record.url.split("wire.test")[1]: p.record for p in pages if p.record}
            return first, second, stored
        finally:
            await store.close()

    return asyncio.run(go())


def test_copies_point_at_the_page_fetched_first_and_a_rerun_writes_nothing(
    tmp_path: Path,
) -> None:
    first, second, stored = run_twice(tmp_path / "w.db", Job(article=True))
    original = f"http://wire.test{ORIGINAL}"
    assert stored[ORIGINAL].near_duplicate_of is None
    for path in COPIES:
        if path not in (ORIGINAL, OTHER):
            assert stored[path].near_duplicate_of == original, path
            assert stored[path].data["kind"] == "article"  # marked, item kept
    assert stored[OTHER].near_duplicate_of is None  # no copy of anything: cleared
    assert first.tally.near_duplicates == {"marked": 3, "cleared": 1}
    assert second.tally.near_duplicates == {} and second.tally.changed == 0


def test_drop_clears_the_copies_items_and_keep_decides_nothing(tmp_path: Path) -> None:
    _, _, dropped = run_twice(tmp_path / "d.db", Job(article=True, near_duplicates="drop"))
    for path in COPIES:
        is_copy = path not in (ORIGINAL, OTHER)
        assert (dropped[path].near_duplicate_of is not None) == is_copy, path
        assert bool(dropped[path].data) == (not is_copy), path
    first, _, kept = run_twice(tmp_path / "k.db", Job(article=True, near_duplicates="keep"))
    assert first.tally.near_duplicates == {}
    assert all(kept[path].near_duplicate_of is None for path in COPIES if path != OTHER)
