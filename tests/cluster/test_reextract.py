"""`nadird reextract` as a user runs it, on SQLite: the shop crawled with one
set of rules, re-extracted with another, and not one request more."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from support.reextract_helpers import (
    NEW_FIELDS,
    NEW_SCHEMA,
    crawl_shop,
    page_record,
    reextract,
    summary_of,
    valid_once_priced_as_text,
    write_config,
)
from support.shop import SHOP_FIELDS, SHOP_SCHEMA, Shop

from nadird.store.sqlite.store import SqliteStore
from nadird.testing.cluster import read_records
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def fill(path: Path, records: list[object]) -> None:
    async def go() -> None:
        store = SqliteStore(str(path))
        await store.open()
        try:
            await store.write(records)  # type: ignore[arg-type]
        finally:
            await store.close()

    asyncio.run(go())


def checkpoints(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'checkpoint:%'").fetchone()
    return int(row[0])


def test_new_rules_reach_the_stored_items_without_one_request(tmp_path: Path) -> None:
    shop = Shop(count=40)
    store = f"sqlite:///{tmp_path / 'shop.db'}"
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        crawl_shop(tmp_path, web, shop, store)
        before = {r.url: r.data for r in asyncio.run(read_records(str(tmp_path / "shop.db")))}
        requests = len(web.entries())
        config = write_config(tmp_path / "new.yaml", store, NEW_FIELDS, NEW_SCHEMA)
        done = summary_of(reextract(tmp_path, config))
        again = summary_of(reextract(tmp_path, config))
        assert len(web.entries()) == requests  # nothing fetched, by either run
    after = {r.url: r.data for r in asyncio.run(read_records(str(tmp_path / "shop.db")))}
    items = {url: data for url, data in after.items() if "/item/" in url}
    assert len(items) == shop.count and set(after) == set(before)
    assert done["complete"] is True and done["read"] == len(before)
    assert done["changed"] == len(before) and done["unchanged"] == 0 and done["skipped"] == {}
    assert done["became_valid"] == valid_once_priced_as_text(shop) > 0
    assert done["became_invalid"] == 0
    for product in shop.products():
        data = items[next(u for u in items if u.endswith(f"/item/{product.index}"))]
        assert data["heading"] == (" ".join((product.title or "").split()) or None)
        assert data["price"] == " ".join(product.price_text.split())
        assert ("_valid" in data) == ("title" in product.invalid)
    # The same rules again: nothing left to change, and a fresh pass (the
    # finished one left no checkpoint).
    assert again["resumed"] is False and again["read"] == len(before)
    assert again["unchanged"] == len(before) and again["changed"] == 0


def test_an_unknown_job_exits_2_naming_it(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.yaml", "sqlite:///x.db", SHOP_FIELDS, SHOP_SCHEMA)
    done = reextract(tmp_path, config, job="shoes")
    assert done.returncode == 2 and done.stdout == ""
    assert "--job: unknown job 'shoes'" in done.stderr and "default" in done.stderr
    assert not (tmp_path / "x.db").exists()


def test_bad_bodies_are_skipped_and_counted(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    whole = b"<html><body><h1 class='title'>Cut</h1>" + b"<p>filler</p>" * 50 + b"</body></html>"
    cut = page_record(7, body=whole[:60])
    cut.checksum = page_record(7, body=whole).checksum  # the fetch saw the whole body
    records = [
        page_record(0),
        page_record(1),  # its body is damaged below
        page_record(2),  # its compressed body is cut below
        page_record(3, body=b"x", content_type="image/png"),
        page_record(4, error="timeout: read", status=0),
        page_record(5),  # stored without its body below (noindex, an older release)
        page_record(6),  # its data is damaged below
        cut,
        page_record(8, status=404),
    ]
    records[4].body = records[5].body = None
    fill(db, records)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE pages SET body = ? WHERE url LIKE '%/p/1'", (b"not zlib at all",))
        squeezed = zlib.compress(records[2].body)[:-8]
        conn.execute("UPDATE pages SET body = ? WHERE url LIKE '%/p/2'", (squeezed,))
        conn.execute("UPDATE pages SET data = '{\"title\": ' WHERE url LIKE '%/p/6'")
    config = write_config(tmp_path / "c.yaml", f"sqlite:///{db}", NEW_FIELDS, NEW_SCHEMA)
    done = summary_of(reextract(tmp_path, config))
    assert done["read"] == len(records) and done["changed"] == 1
    assert done["skipped"] == {
        "body_incomplete": 1,
        "corrupt_body": 2,
        "fetch_error": 1,
        "http_status": 1,
        "no_body": 1,
        "not_html": 1,
        "unreadable": 1,
    }


def test_an_interrupted_run_goes_on_from_its_checkpoint(tmp_path: Path) -> None:
    db = tmp_path / "many.db"
    pages = 300
    fill(db, [page_record(i) for i in range(pages)])
    config = write_config(tmp_path / "c.yaml", f"sqlite:///{db}", NEW_FIELDS, NEW_SCHEMA)
    args = [sys.executable, "-m", "nadird", "reextract", "--job", "default", "-c", str(config)]
    args += ["--chunk", "1", "--log-format", "json"]
    proc = subprocess.Popen(
        args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    for line in proc.stderr:  # the first progress line comes after the first chunk
        if "reextract_progress" in line:
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=60)
    first = summary_of(subprocess.CompletedProcess(args, proc.returncode, out, err), status=130)
    assert first["complete"] is False and first["signal"] == "SIGINT"
    assert 0 < first["read"] < pages and first["changed"] == first["read"]
    with sqlite3.connect(db) as conn:
        (saved,) = conn.execute(
            "SELECT count(*) FROM meta WHERE key LIKE 'checkpoint:%'"
        ).fetchone()
    rest = summary_of(reextract(tmp_path, config))
    # The counts carry over, and no page was re-extracted twice (a page done
    # by the first run would count as unchanged).
    assert rest["resumed"] is True and rest["complete"] is True
    assert rest["read"] == pages and rest["changed"] == pages and rest["unchanged"] == 0
    assert saved == 1 and checkpoints(db) == 0
    restarted = summary_of(reextract(tmp_path, config, "--restart"))
    assert restarted["read"] == pages and restarted["unchanged"] == pages


def stored_data(db: Path) -> dict[str, Any]:
    with sqlite3.connect(db) as conn:
        return {url: json.loads(data) for url, data in conn.execute("SELECT url, data FROM pages")}


def test_without_a_config_it_refuses_and_leaves_the_items(tmp_path: Path) -> None:
    db = tmp_path / "shop.db"
    fill(db, [page_record(i) for i in range(7)])
    before = stored_data(db)
    args = [sys.executable, "-m", "nadird", "reextract", "--job", "default"]
    done = subprocess.run(
        [*args, "--store", f"sqlite:///{db}"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "-c/--config" in done.stderr and "job 'default'" in done.stderr
    assert stored_data(db) == before


def test_rules_that_clear_every_item_stop_before_writing_unless_forced(tmp_path: Path) -> None:
    db = tmp_path / "shop.db"
    fill(db, [page_record(i) for i in range(7)])
    before = stored_data(db)
    nothing = {"title": [{"css": "h2.gone"}]}  # a selector that no longer matches
    config = write_config(tmp_path / "c.yaml", f"sqlite:///{db}", nothing, {})
    done = reextract(tmp_path, config, "--chunk", "3")
    assert done.returncode == 2 and done.stdout == ""
    assert f"{config}: jobs.default.fields:" in done.stderr and "--force" in done.stderr
    assert stored_data(db) == before and checkpoints(db) == 0
    forced = summary_of(reextract(tmp_path, config, "--force"))
    assert forced["changed"] == 7
    assert all(data == {"title": None} for data in stored_data(db).values())
