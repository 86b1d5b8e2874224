"""The master's store writer: how far behind the store it lets results get."""

import asyncio
from collections.abc import Sequence

from nadird.master.results.writer import BEHIND_BATCHES, ResultWriter
from nadird.store.base import PageRecord


class StalledStore:
    """A store whose writes wait until released."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.written = 0

    async def write(self, records: Sequence[PageRecord]) -> None:
        await self.release.wait()
        self.written += len(records)


def record(i: int) -> PageRecord:
    return PageRecord(
        fp=i.to_bytes(16, "big"),
        url=f"http://a.test/{i}",
        final_url=f"http://a.test/{i}",
        status=200,
        fetched_at=0.0,
        job="default",
        depth=0,
    )


async def test_behind_from_a_full_backlog_until_half_of_it_is_written() -> None:
    store = StalledStore()
    writer = ResultWriter(store, flush_size=10, flush_interval=60.0)  # type: ignore[arg-type]
    limit = BEHIND_BATCHES * 10
    writer.add([record(i) for i in range(limit - 1)])
    assert not writer.behind()
    writer.add([record(limit)])
    assert writer.behind()
    flushing = asyncio.create_task(writer.flush())
    store.release.set()
    await flushing
    assert store.written == limit and writer.pending == 0
    assert not writer.behind()
    # Between the two marks it keeps its state: no flapping at the limit.
    writer.add([record(i) for i in range(limit)])
    assert writer.behind()
    writer._buffer = writer._buffer[: limit // 2 + 1]
    assert writer.behind()
    writer._buffer = writer._buffer[: limit // 2]
    assert not writer.behind()
    writer.add([record(i) for i in range(limit // 2 - 1)])  # just under the limit again
    assert not writer.behind()
