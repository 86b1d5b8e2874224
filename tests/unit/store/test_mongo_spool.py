"""The spool on its own: durable FIFO of batches, settle in one transaction,
lock, owner check. No MongoDB needed."""

from __future__ import annotations

import dataclasses
import os
import zlib
from pathlib import Path

import msgpack
import pytest
from support.mongo_helpers import record

from nadird.common.errors import ErrorKind, StoreError
from nadird.store.base import PageRecord
from nadird.store.mongo.spool import DeadRecord, Spool, pack_records, unpack_records

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
        await spool.settle(rest.last_seq, dead=[DeadRecord(record(2), "121: invalid")])
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


def test_every_record_field_survives_the_spool() -> None:
    full = PageRecord(
        fp=b"\x01" * 16,
        url="http://a.test/x",
        final_url="http://a.test/y",
        status=200,
        fetched_at=1.5,
        job="j",
        depth=3,
        content_type="text/html",
        data={"title": "T", "tags": ["a", "b"]},
        checksum="c" * 32,
        body=b"<html>",
        error="e",
        redirects=["http://a.test/x"],
        node="w1",
        canonical="http://a.test/z",
        rendered=True,
        headers={"etag": '"v1"'},
        error_kind=ErrorKind.INTERNAL,
        signature="f:0123",
        item_key="SKU-1",
        fallback_from="detailed",
        method="POST",
        meta={"query": "kettle"},
        simhash=-(2**63),
        near_duplicate_of="http://a.test/first",
    )
    for f in dataclasses.fields(PageRecord):  # none left at its default
        assert getattr(full, f.name) != getattr(
            PageRecord(fp=b"", url="", final_url="", status=0, fetched_at=0.0, job="", depth=0),
            f.name,
        )
    assert unpack_records(pack_records([full])) == [full]


def test_a_batch_spooled_before_a_field_existed_still_reads() -> None:
    row = {name: getattr(record(1), name) for name in ("fp", "url", "final_url", "status")}
    row |= {"fetched_at": 1.0, "job": "j", "depth": 0}  # no canonical, no node, ...
    old = zlib.compress(msgpack.packb({"v": 1, "records": [row]}, use_bin_type=True))
    (back,) = unpack_records(old)
    assert back.url == record(1).url and back.canonical is None
