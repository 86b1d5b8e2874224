"""`stored_total` is the number of pages in the store, across restarts: a
page written again (a revisit, a late duplicate) is still one page, while
`stored_this_run` counts every write (a real master in this process, its
SQLite store on disk)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from support.console_helpers import config, http, login, running_master

from nadird.common.urls import fingerprint
from nadird.master.service.server import Master
from nadird.store.base import PageRecord


def page(path: str, at: float) -> PageRecord:
    url = f"http://pages.test/{path}"
    return PageRecord(
        url=url, fp=fingerprint(url), final_url=url, depth=0, job="default", fetched_at=at,
        status=200,
    )  # fmt: skip


async def write(master: Master, records: list[PageRecord]) -> None:
    master.writer.add(records)
    await master.writer.flush()


async def counted(master: Master, expected: int) -> dict[str, object]:
    """The status once the start's count is in and `stored_total` is `expected`."""
    deadline = time.monotonic() + 10
    while master.status()["stored_total"] != expected and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    status = master.status()
    assert status["stored_total"] == expected, status
    return status


async def test_stored_total_counts_pages_not_writes_across_restarts(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    async with running_master(cfg) as master:
        await write(master, [page("a", 1.0)])
        await write(master, [page("a", 2.0), page("b", 2.0)])
        await write(master, [page("a", 3.0), page("a", 3.5)])  # fetched again, twice
        status = await counted(master, 2)
        assert status["stored_this_run"] == 5
        assert master.api is not None
        async with http() as client:  # the console's Pages stored: pages, not writes
            await login(client, master.api.url)
            async with client.get(master.api.url + "/ui") as overview:
                assert 'data-stat="stored">2<' in await overview.text()
    async with running_master(cfg) as master:
        status = await counted(master, 2)  # the store's pages, not the last run's writes
        assert status["stored_this_run"] == 0
        await write(master, [page("b", 4.0), page("c", 4.0)])
        status = await counted(master, 3)
        assert status["stored_this_run"] == 2
