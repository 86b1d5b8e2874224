"""Shared by the `nadird reextract` tests: the shop crawled, the command run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from nadird.testing import forkserver
from nadird.testing.web import SyntheticWeb
from support.shop import SHOP_FIELDS, SHOP_SCHEMA, Shop

# The rules changed after the crawl: a new field, and prices kept as text
# (no `number` step, no type to fail), so an item invalid only on its price
# becomes valid.
NEW_FIELDS: dict[str, Any] = {**SHOP_FIELDS, "heading": [{"xpath": "//h1"}]}
NEW_SCHEMA: dict[str, Any] = {**SHOP_SCHEMA, "price": {"process": ["strip"]}}


def write_config(
    path: Path, store: str, fields: dict[str, Any], schema: dict[str, Any], **job: Any
) -> Path:
    # JSON is YAML.
    jobs = {"default": {"fields": fields, "schema": schema, **job}}
    path.write_text(json.dumps({"store": {"uri": store}, "jobs": jobs}))
    return path


def crawl_shop(tmp_path: Path, web: SyntheticWeb, shop: Shop, store: str) -> None:
    web.add_route("/shop/", shop.route)
    config = write_config(tmp_path / "old.yaml", store, SHOP_FIELDS, SHOP_SCHEMA)
    args = [
        sys.executable, "-m", "nadird", "crawl", f"http://shop.test:{web.port}/shop/",
        "--resolve", "*.test=127.0.0.1", "--allow-private", "--delay", "0",
        "--workers", "1", "--store", store, "-c", str(config),
    ]  # fmt: skip
    done = forkserver.run(args, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


def reextract(
    cwd: Path, config: Path, *extra: str, job: str = "default"
) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "nadird", "reextract", "--job", job, "-c", str(config), *extra]
    return forkserver.run(args, cwd=cwd, timeout=120)


def summary_of(done: subprocess.CompletedProcess[str], status: int = 0) -> dict[str, Any]:
    assert done.returncode == status, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["event"] == "reextract_summary"
    return found


def valid_once_priced_as_text(shop: Shop) -> int:
    """Products the old rules found invalid on their price alone."""
    return sum(1 for item in shop.products() if item.invalid == ("price",))


def product_html(i: int, price: str = "12.50") -> bytes:
    return (
        f"<html><body><h1 class='title'>Product {i}</h1><p class='price'>{price}</p>"
        f"<a class='next' href='/p/{i + 1}'>next</a></body></html>"
    ).encode()


def page_record(i: int, body: bytes | None = None, job: str = "default", **fields: Any) -> Any:
    """A stored page as a worker would have sent it, with the old rules' data."""
    from nadird.common.urls import fingerprint
    from nadird.store.base import PageRecord
    from nadird.worker.parse.parser import content_checksum

    url = f"http://shop.test/p/{i}"
    html = body if body is not None else product_html(i)
    values: dict[str, Any] = {
        "url": url,
        "fp": fingerprint(url),
        "final_url": url,
        "status": 200,
        "fetched_at": 1_800_000_000.25 + i,
        "job": job,
        "depth": 1,
        "content_type": "text/html",
        "checksum": content_checksum(html),
        "body": html,
        "data": {"title": f"Product {i}"},
    }
    values.update(fields)
    return PageRecord(**values)


# The wire copy fetched first (and stored third: the store's order is not the fetch's).
WIRE_FIRST = "/wire/gazette/tunnel"


def wire_records() -> list[Any]:
    """The wire story's pages (support/articles/wire.py) as stored without
    fingerprints, WIRE_FIRST fetched first; the blog post stored as a copy
    of the story, which it is not."""
    from support.articles.wire import COPIES, OTHER

    paths = list(COPIES)
    stored = []
    for i, path in enumerate(paths):
        url = f"http://wire.test{path}"
        record = page_record(i, COPIES[path].encode(), url=url, final_url=url)
        record.fetched_at = 1_800_000_000.0 + (0 if path == WIRE_FIRST else 10 + i)
        stored.append(record)
    stored[paths.index(OTHER)].near_duplicate_of = "http://wire.test/wire/ledger/tunnel"
    return stored
