"""Benchmark: MongoStore's buffered writer vs one write per document.

    python scripts/bench_mongo_writer.py [--records 5000] [--batch 500] [--body-kb 8]
                                         [--repeat 3] [--uri mongodb://HOST:PORT/DB]

Without --uri a SecantusDB server is started on a loopback port in a
temporary directory (pip install -e '.[test]'). Each mode writes the same
records into a fresh database of the same server:

- buffered: `MongoStore.write` with batches of --batch records (what the
  master does): one dedup lookup and two unordered bulk upserts per batch;
- store, 1 per call: `MongoStore.write([record])`, the same code and
  documents, one record per call;
- insert_one: the naive writer, one `insert_one` of the page document per
  record (no items, no dedup) with the same write concern: the cheapest
  per-document path there is;
- insert_many: the same page documents in unordered batches of --batch,
  which isolates what batching alone saves on this server.

All three run twice: with the store's default write concern {w: majority,
j: true} and with {w: majority, j: false}, since a server may pay the journal
flush per document (SecantusDB does) and that cost is not amortized by
batching. Prints one JSON object: records/s per mode and the ratios, plus the
machine and versions, for docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import hashlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.write_concern import WriteConcern

from nadird.config import StoreConfig
from nadird.store.base import PageRecord
from nadird.store.mongo.docs import BSON_LIMIT, prepare
from nadird.store.mongo.store import MongoStore
from nadird.testing.mongo import MongoServer, with_database


def make_records(count: int, body_kb: int) -> list[PageRecord]:
    filler = " ".join(f"word{i % 97}" for i in range(body_kb * 128))
    records = []
    for i in range(count):
        url = f"http://site-{i % 50}.test/p/{i}"
        body = f"<html><body><h1>Page {i}</h1><p>{filler}</p></body></html>".encode()
        records.append(
            PageRecord(
                fp=hashlib.blake2b(url.encode(), digest_size=16).digest(),
                url=url,
                final_url=url,
                status=200,
                fetched_at=time.time(),
                job="default",
                depth=2,
                content_type="text/html",
                data={"title": f"Page {i}", "price": f"{i}.99"},
                checksum=hashlib.blake2b(body, digest_size=16).hexdigest(),
                body=body,
                node="bench",
            )
        )
    return records


async def timed(name: str, count: int, run: Callable[[], Awaitable[None]]) -> dict[str, Any]:
    started = time.perf_counter()
    await run()
    seconds = time.perf_counter() - started
    return {"mode": name, "records": count, "seconds": round(seconds, 3),
            "records_per_s": round(count / seconds, 1)}  # fmt: skip


async def bench(
    base_uri: str, records: list[PageRecord], batch: int, spool: Path, journal: bool
) -> list[dict[str, Any]]:
    """The three modes with write concern {w: majority, j: journal}."""
    tag = "j" if journal else "nj"

    async def with_store(db: str, per_call: int) -> dict[str, Any]:
        uri = with_database(base_uri, db)
        config = StoreConfig(uri=uri, spool_path=str(spool / f"{db}.db"), journal=journal)
        store = MongoStore(uri, config)
        await store.open()

        async def run() -> None:
            for start in range(0, len(records), per_call):
                await store.write(records[start : start + per_call])

        try:
            result = await timed(f"store, {per_call} per call", len(records), run)
            assert store.spool_records == 0 and await store.count() == len(records)
        finally:
            await store.close()
        return result

    results = [
        await with_store(f"bench_buffered_{tag}", batch),
        await with_store(f"bench_single_{tag}", 1),
    ]
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
        with_database(base_uri, f"bench_insert_one_{tag}"), tz_aware=True
    )
    # The store's write concern, so only the round trips differ.
    concern = WriteConcern(w="majority", j=journal)
    pages = client.get_default_database().get_collection("pages", write_concern=concern)
    now = dt.datetime.now(dt.UTC)
    docs = [prepare(r, 8 * 1024 * 1024, BSON_LIMIT, now).page for r in records]

    async def insert_each() -> None:
        for doc in docs:
            await pages.insert_one(doc)

    async def insert_batches() -> None:
        for start in range(0, len(docs), batch):
            await pages.insert_many(docs[start : start + batch], ordered=False)

    try:
        results.append(await timed("insert_one per document", len(records), insert_each))
        await pages.drop()
        results.append(await timed(f"insert_many, {batch} per call", len(records), insert_batches))
    finally:
        await client.close()
    for result in results:
        result["write_concern"] = concern.document
    return results


async def drop_bench_databases(base_uri: str) -> None:
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(base_uri)
    try:
        for name in await client.list_database_names():
            if name.startswith("bench_"):
                await client.drop_database(name)
    finally:
        await client.close()


def summarize(repeats: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Median records/s per mode over the repetitions, with the range, and ratios."""
    modes: list[dict[str, Any]] = []
    for same_mode in zip(*repeats, strict=True):
        rates = sorted(r["records_per_s"] for r in same_mode)
        modes.append(
            {
                "mode": same_mode[0]["mode"],
                "write_concern": same_mode[0]["write_concern"],
                "records_per_s_median": statistics.median(rates),
                "records_per_s_range": [rates[0], rates[-1]],
            }
        )
    buffered, single, insert_one, insert_many = (m["records_per_s_median"] for m in modes)
    return {
        "modes": modes,
        "buffered_vs_store_1_per_call": round(buffered / single, 1),
        "buffered_vs_insert_one": round(buffered / insert_one, 1),
        "insert_many_vs_insert_one": round(insert_many / insert_one, 1),
    }


def machine() -> dict[str, Any]:
    with open("/proc/meminfo", encoding="ascii") as fh:
        total_kb = int(fh.readline().split()[1])
    versions = {name: metadata.version(name) for name in ("nadird", "pymongo", "secantusdb")}
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "cores": os.cpu_count(),
        "memory_gib": round(total_kb / 1024 / 1024, 1),
        "cpu": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        **versions,
    }


async def run_all(base_uri: str, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    records = make_records(args.records, args.body_kb)
    runs: dict[str, list[list[dict[str, Any]]]] = {"journal": [], "no_journal": []}
    # Interleaved repetitions: a noisy neighbour then skews every mode alike.
    for _ in range(args.repeat):
        for journal in (True, False):
            results = await bench(base_uri, records, args.batch, tmp, journal)
            runs["journal" if journal else "no_journal"].append(results)
            await drop_bench_databases(base_uri)
    return {name: summarize(repeats) for name, repeats in runs.items()}


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="nadird-bench-") as tmp:
        if args.uri:
            runs = await run_all(args.uri, args, Path(tmp))
            server = "MongoDB at " + args.uri.split("@")[-1].split("/")[0]
        else:
            with MongoServer(Path(tmp) / "data") as mongo:
                runs = await run_all(mongo.uri("admin"), args, Path(tmp))
            server = "SecantusDB on loopback"
    report = {
        "benchmark": "mongo_writer",
        "command": "python scripts/bench_mongo_writer.py " + " ".join(sys.argv[1:]),
        "server": server,
        "records": args.records,
        "body_kb": args.body_kb,
        "batch": args.batch,
        "repeat": args.repeat,
        **runs,
        "machine": machine(),
    }
    print(json.dumps(report, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--body-kb", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (median reported)")
    parser.add_argument("--uri", help="an existing MongoDB (default: start SecantusDB)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
