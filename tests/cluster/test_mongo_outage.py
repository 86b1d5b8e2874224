"""MongoDB goes away: batches are acknowledged from the spool, replayed in order
when it is back, and a process killed with a full spool loses nothing.

Each test runs its own SecantusDB so it can stop it (kill -9) and start it
again on the same port and data directory.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

from support import DIR
from support.mongo_helpers import make_store, record, sync_db

from nadird.testing.mongo import MongoServer

SUPPORT = DIR  # the scripts this test runs


async def wait_for(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return True
        await asyncio.sleep(0.05)
    return False


async def test_outage_is_spooled_then_replayed_in_order(
    own_server: MongoServer, tmp_path: Path
) -> None:
    uri = own_server.uri("nd")
    store = make_store(uri, tmp_path, spool_max_bytes=4096)
    await store.open()
    try:
        await store.write([record(i) for i in range(0, 100)])
        assert not store.spooling

        own_server.stop()
        started = time.monotonic()
        await store.write([record(i) for i in range(100, 200)])
        detected = time.monotonic() - started
        assert store.spooling and store.spool_records == 100
        assert detected < 5, detected  # server selection timeout 0.5 s
        started = time.monotonic()
        await store.write([record(i) for i in range(200, 300)])
        assert time.monotonic() - started < 1  # no more waiting on the network
        # A newer result for a URL still in the spool: it must win after replay.
        newer = dataclasses.replace(record(150), status=410, fetched_at=record(150).fetched_at + 9)
        await store.write([newer])
        assert store.spool_records == 201 and store.backpressure

        await asyncio.sleep(1.0)  # a while down; the replayer keeps failing meanwhile
        own_server.start()
        assert await wait_for(lambda: store.spool_records == 0, 20)
        assert not store.spooling and not store.backpressure
        assert await store.count() == 300
    finally:
        await store.close()
    with sync_db(uri) as db:
        assert db.pages.count_documents({}) == 300
        assert db.items.count_documents({}) == 300
        assert db.pages.find_one({"_id": newer.fp})["status"] == 410
    assert (tmp_path / "spool.db").stat().st_size < 64 * 1024  # truncated after draining


async def test_spool_left_at_close_is_replayed_by_the_next_open(
    own_server: MongoServer, tmp_path: Path
) -> None:
    uri = own_server.uri("nd")
    store = make_store(uri, tmp_path)
    store.DRAIN_TIMEOUT = 0.2
    await store.open()
    own_server.stop()
    await store.write([record(i) for i in range(40)])
    await store.close()  # cannot drain: the spool stays on disk
    own_server.start()
    again = make_store(uri, tmp_path)
    await again.open()
    try:
        assert again.spool_records == 0  # replayed before open returned
        assert await again.count() == 40
    finally:
        await again.close()


def test_kill_9_with_a_full_spool_loses_nothing_and_doubles_nothing(
    own_server: MongoServer, tmp_path: Path
) -> None:
    """Store level: the helper process holding the store is killed with -9
    while its spool holds acknowledged batches; a new store replays them."""
    uri = own_server.uri("nd")
    spool = tmp_path / "state" / "spool.db"
    helper = subprocess.Popen(
        [sys.executable, str(SUPPORT / "mongo_spool_writer.py"), uri, str(spool), "0", "300"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert helper.stdin is not None and helper.stdout is not None

    def step() -> dict[str, int]:
        assert helper.stdin is not None and helper.stdout is not None
        helper.stdin.write("\n")
        helper.stdin.flush()
        line = helper.stdout.readline()
        assert line, "helper died"
        state: dict[str, int] = json.loads(line)
        return state

    try:
        assert json.loads(helper.stdout.readline())["event"] == "open"
        for _ in range(2):  # 100 records straight into MongoDB
            assert step()["spool"] == 0
        own_server.stop()
        states = [step() for _ in range(4)]  # 200 records acknowledged from the spool
        assert states[-1] == {"event": "written", "upto": 300, "spool": 200}
    finally:
        helper.kill()
        helper.wait(10)

    own_server.start()

    async def reopen() -> tuple[int, int]:
        store = make_store(uri, tmp_path, spool_path=str(spool))
        await store.open()
        try:
            return store.spool_records, await store.count()
        finally:
            await store.close()

    assert asyncio.run(reopen()) == (0, 300)
    with sync_db(uri) as db:
        urls = [doc["url"] for doc in db.pages.find({}, {"url": 1})]
        assert sorted(urls) == sorted(record(i).url for i in range(300))
        assert db.items.count_documents({}) == 300
