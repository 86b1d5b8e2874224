"""Helper process for test_record_schema: nadird with two more declared fields.

Usage: python record_extra_field.py MONGO_URI SQLITE_PATH WORK_DIR

Before anything else of nadird is imported, the declaration in nadird.common.record
gets two fields, the way a release would add them: `note` (kept in the
`pages` document) and `tag` (kept in the `items` document). Nothing else is
changed. Then one page carrying both goes through every layer, and what each
layer gave back is printed as one JSON object, for the test to judge.
"""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

import nadird.common.record
from nadird.common.record import Cell, Mongo, fact, facts

NEXT_VERSION = 1 + max(
    declared.since
    for part in (
        nadird.common.record.PageFetch,
        nadird.common.record.RecordJob,
        nadird.common.record.PageContent,
    )
    for _, declared in facts(part)
)


@dataclass
class PageContent(nadird.common.record.PageContent):
    __slots__ = ()

    note: str | None = field(default=None, metadata=fact(Cell.TEXT, since=NEXT_VERSION))
    tag: str | None = field(
        default=None, metadata=fact(Cell.TEXT, mongo=Mongo.ITEM, since=NEXT_VERSION)
    )


nadird.common.record.PageContent = PageContent  # type: ignore[misc]

# Only now: every layer derives its shape from the declaration at import.
from mongo_helpers import make_store  # noqa: E402

from nadird.master.results.records import record_from_result  # noqa: E402
from nadird.protocol.codec import decode, encode  # noqa: E402
from nadird.protocol.messages import PageResult, Results  # noqa: E402
from nadird.store.backend import Store  # noqa: E402
from nadird.store.base import PageRecord  # noqa: E402
from nadird.store.export import export_records  # noqa: E402
from nadird.store.mongo.spool import pack_records, unpack_records  # noqa: E402
from nadird.store.sqlite.store import SqliteStore  # noqa: E402

URL = "http://a.test/new"
FP = b"\x07" * 16


def extras(record: Any) -> list[Any]:
    return [record.note, record.tag]


def wire() -> tuple[dict[str, Any], PageResult]:
    page = PageResult(
        url=URL,
        fp=FP,
        final_url=URL,
        status=200,
        fetched_at=1_796_119_500.0,
        depth=1,
        content_type="text/html",
        data={"title": "T"},
        body=b"<html><body><p>some words</p></body></html>",
        note="a note",
        tag="a tag",
    )
    frame = encode(Results(node="w1", lease="l-1", epoch=1, job="j", pages=[page]))
    (sent,) = msgpack.unpackb(frame)["pages"]
    decoded = decode(frame)
    assert isinstance(decoded, Results)
    (back,) = decoded.pages
    return {"sent": [sent.get("note"), sent.get("tag")], "decoded": extras(back)}, back


async def read_back(store: Store) -> dict[str, list[Any]]:
    return {r.url: extras(r) async for r in store.iter_records()}


async def exported(store: Store) -> dict[str, Any]:
    lines, table = io.StringIO(), io.StringIO()
    await export_records(store, lines, "jsonl")
    await export_records(store, table, "csv")
    by_url = {line["url"]: line for line in map(json.loads, lines.getvalue().splitlines())}
    rows = list(csv.DictReader(io.StringIO(table.getvalue())))
    cells = {row["url"]: [row.get("note"), row.get("tag")] for row in rows}
    new = by_url[URL]
    return {"jsonl": [new.get("note"), new.get("tag")], "csv": cells}


async def main(mongo_uri: str, sqlite_path: str, work: Path) -> dict[str, Any]:
    report, page = wire()
    record = record_from_result(page, "j", "w1")
    report["master"] = extras(record)
    report["record_fields"] = [f.name for f in dataclasses.fields(PageRecord)]
    report["spool"] = extras(unpack_records(pack_records([record]))[0])

    sqlite = SqliteStore(sqlite_path)  # a store written before the fields existed
    await sqlite.open()
    try:
        await sqlite.write([record])
        report["sqlite"] = await read_back(sqlite)
        report["export"] = await exported(sqlite)
    finally:
        await sqlite.close()

    mongo = make_store(mongo_uri, work)
    await mongo.open()
    try:
        await mongo.write([record])
        report["mongo"] = await read_back(mongo)
    finally:
        await mongo.close()
    return report


if __name__ == "__main__":
    found = asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3])))
    print(json.dumps(found))
