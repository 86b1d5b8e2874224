"""The page record is declared once (nadird.common.record): a field added there, and
nowhere else, is carried by every layer: the wire, the master's conversion,
SQLite (an older store gains the column), MongoDB (pages and items), the
spool and both export formats."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from support import DIR
from support.mongo_helpers import sync_db
from support.record_schema_helpers import OLD_URL, record

from nadird.store.sqlite.schema import SCHEMA_VERSION
from nadird.store.sqlite.store import SqliteStore

SUPPORT = DIR  # the scripts this test runs


async def test_a_field_declared_once_reaches_every_layer(mongo_uri: str, tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    store = SqliteStore(str(path))  # written by this nadird, without the new fields
    await store.open()
    await store.write([record(1, OLD_URL)])
    await store.close()

    done = subprocess.run(
        [
            sys.executable,
            str(SUPPORT / "record_extra_field.py"),
            mongo_uri,
            str(path),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=SUPPORT,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)

    both = ["a note", "a tag"]
    new_url = "http://a.test/new"
    assert report["record_fields"][-3:] == ["note", "tag", "node"]
    assert report["sent"] == both  # named fields of the msgpack map
    assert report["decoded"] == both
    assert report["master"] == both
    assert report["spool"] == both
    assert report["sqlite"] == {OLD_URL: [None, None], new_url: both}
    assert report["export"]["jsonl"] == both
    assert report["export"]["csv"] == {OLD_URL: ["", ""], new_url: both}
    assert report["mongo"] == {new_url: both}

    # The older store was migrated by the declaration: columns and version.
    with sqlite3.connect(path) as raw:
        columns = {row[1] for row in raw.execute("PRAGMA table_info(pages)")}
        (version,) = raw.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert {"note", "tag"} <= columns
    assert version == str(SCHEMA_VERSION + 1)
    # MongoDB: `note` in the page document, `tag` in the item, by placement.
    with sync_db(mongo_uri) as db:
        page = db.pages.find_one({"url": new_url})
        item = db.items.find_one({"page_id": page["_id"]})
    assert page["note"] == "a note" and "tag" not in page
    assert item["tag"] == "a tag" and "note" not in item
