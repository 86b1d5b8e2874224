"""The spool on its own: durable FIFO of batches, settle in one transaction,
lock, owner check. No MongoDB needed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mongo_helpers import record

from nadird.errors import StoreError
from nadird.store.spool import DeadLetter, Spool

TARGET = "mongodb://127.0.0.1:1/nd"


async def test_batches_come_back_in_order_and_settle_removes_them(tmp_path: Path) -> None:
    spool = Spool(str(tmp_path / "spool.db"), TARGET)
    await spool.open()
    try:
        await spool.append([record(1), record(2)])
        await spool.append([record(3)])
        await spool.append([record(4), record(5)])
        assert spool.records == 5 and spool.bytes > 0
        chunk = await spool.head(3)
        assert chunk is not None
        assert [r.url for r in chunk.records] == [record(i).url for i in (1, 2, 3)]
        assert chunk.records[0] == record(1)
        await spool.settle(chunk.last_seq, retry=[record(2)], attempts=1)
        assert spool.records == 3
        rest = await spool.head(100)
        assert rest is not None
        assert [r.url for r in rest.records] == [record(i).url for i in (4, 5, 2)]
        assert rest.attempts == 1
        await spool.settle(rest.last_seq, dead=[DeadLetter(record(2), "121: invalid")])
        assert (spool.records, spool.bytes, spool.dead_letters) == (0, 0, 1)
        assert await spool.head(10) is None
    finally:
        await spool.close()


async def test_spool_survives_reopen_and_keeps_its_counts(tmp_path: Path) -> None:
    path = str(tmp_path / "spool.db")
    spool = Spool(path, TARGET)
    await spool.open()
    await spool.append([record(i) for i in range(10)])
    size = spool.bytes
    await spool.close()
    again = Spool(path, TARGET)
    await again.open()
    try:
        assert (again.records, again.bytes) == (10, size)
    finally:
        await again.close()


async def test_second_opener_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "spool.db")
    first = Spool(path, TARGET)
    await first.open()
    try:
        with pytest.raises(StoreError, match="in use by another process"):
            await Spool(path, TARGET).open()
    finally:
        await first.close()


async def test_non_empty_spool_of_another_database_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "spool.db")
    spool = Spool(path, TARGET)
    await spool.open()
    await spool.append([record(1)])
    await spool.close()
    with pytest.raises(StoreError, match=r"holds 1 batches for mongodb://127\.0\.0\.1:1/nd"):
        await Spool(path, "mongodb://127.0.0.1:1/other").open()


async def test_drained_spool_file_is_truncated(tmp_path: Path) -> None:
    path = tmp_path / "spool.db"
    spool = Spool(str(path), TARGET)
    await spool.open()
    try:
        body = os.urandom(50_000)
        await spool.append([record(i, body=body) for i in range(20)])
        full = path.stat().st_size + (tmp_path / "spool.db-wal").stat().st_size
        chunk = await spool.head(100)
        assert chunk is not None
        await spool.settle(chunk.last_seq)
        empty = path.stat().st_size + (tmp_path / "spool.db-wal").stat().st_size
    finally:
        await spool.close()
    assert empty < full / 10
