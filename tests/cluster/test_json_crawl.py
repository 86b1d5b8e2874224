"""Crawls of the synthetic JSON catalog: an API walked to its end, prices and
stock read from JSON, JSON-LD and inline scripts, a false JSON body recorded
as a parse error, and expressions that do not compile refused with exit 2."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_cli import nadird
from test_crawl_command import crawl, records, summary

from nadird.common.errors import ErrorKind
from nadird.testing.catalog import API, CATALOG_JOB, Catalog
from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow


def job_config(tmp_path: Path, job: dict[str, Any]) -> str:
    path = tmp_path / "jobs.yaml"
    path.write_text(json.dumps({"jobs": {"default": job}}))  # JSON is YAML
    return str(path)


def fetched(web: SyntheticWeb, prefix: str) -> Counter[str]:
    """How often each path under prefix was requested."""
    return Counter(e.path for e in web.entries() if e.path.startswith(prefix))


def test_the_api_is_walked_to_its_end_and_every_product_read(tmp_path: Path) -> None:
    catalog = Catalog(count=23, per_page=5)
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        catalog.mount(web)
        seed = f"http://shop.test:{web.port}{API}"
        proc, store = crawl(tmp_path, web, "-c", job_config(tmp_path, CATALOG_JOB), seeds=[seed])
        result = summary(proc)
        listings = fetched(web, API + "?")
        seeds = fetched(web, API)[API]
        details = fetched(web, API + "/")
        pages = fetched(web, "/catalog/item/")
    # Pages 1 (the seed) to 5 have items, page 6 is the empty one that ends the walk.
    assert seeds == 1 and catalog.last_page == 5
    assert listings == {f"{API}?page={n}": 1 for n in range(2, 7)}
    assert fetched_once(details, [f"{API}/{p.index}" for p in catalog.products()])
    assert fetched_once(pages, [p.page for p in catalog.products()])
    stored = {r.url.split(str(web.port), 1)[1]: r for r in records(store)}
    for item in catalog.products():
        page = stored[item.page]
        assert page.error is None and "_valid" not in page.data, page.data
        assert page.data["price"] == item.price and isinstance(page.data["price"], int | float)
        assert page.data["stock"] == item.stock and type(page.data["stock"]) is int
        assert page.data["name"] == item.name
        detail = stored[item.detail]
        if item.broken:
            assert detail.status == 200 and detail.error_kind is ErrorKind.PARSE
            assert detail.error is not None and "body is not JSON" in detail.error
            assert detail.data == {}
        else:
            assert detail.error is None
            assert detail.data["price"] == item.price and detail.data["stock"] == item.stock
    first = stored[API]
    assert first.data["ids"] == [0, 1, 2, 3, 4]
    broken = sum(p.broken for p in catalog.products())
    assert broken >= 2 and result["errors"] == broken, result


def fetched_once(counts: Counter[str], paths: list[str]) -> bool:
    return counts == dict.fromkeys(paths, 1)


def test_a_next_field_is_followed_until_it_is_null(tmp_path: Path) -> None:
    catalog = Catalog(count=12, per_page=4)
    job = {
        "fields": {"ids": [{"jmes": "items[].id", "multiple": True}], "next": [{"jmes": "next"}]},
        "paginate": {"next": "next"},
    }
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        catalog.mount(web)
        seed = f"http://shop.test:{web.port}{API}?page=1"
        proc, store = crawl(tmp_path, web, "-c", job_config(tmp_path, job), seeds=[seed])
        summary(proc)
        listings = fetched(web, API)
    # The last page with items says next: null, so no empty page is asked for.
    assert listings == {f"{API}?page={n}": 1 for n in range(1, catalog.last_page + 1)}
    ids = [i for r in records(store) for i in r.data.get("ids", [])]
    assert sorted(ids) == list(range(catalog.count))


@pytest.mark.parametrize(
    ("job", "says"),
    [
        (
            {"fields": {"price": [{"jmes": "items[."}]}},
            "jobs.default: fields.price[0]: invalid jmes",
        ),
        (
            {"fields": {"s": [{"script": "window.state", "jmes": "nosuch(@)"}]}},
            "fields.s[0]: invalid jmes 'nosuch(@)': unknown function nosuch()",
        ),
        ({"links": {"jmes": ["items[].url", "[?"]}}, "jobs.default: links.jmes[1]: invalid jmes"),
        ({"fields": {"p": [{"jsonld": "Product", "css": "p"}]}}, "jobs.default.fields.p[0]"),
        (
            {"fields": {"ids": [{"jmes": "ids"}]}, "paginate": {"param": "page"}},
            "jobs.default.paginate: until_empty: expected the field",
        ),
        (
            {"fields": {"ids": [{"jmes": "ids"}]}, "paginate": {"next": "cursor"}},
            "paginate.next: 'cursor' is not a field of the job",
        ),
    ],
)
def test_a_json_selector_that_cannot_run_exits_2_naming_job_and_field(
    tmp_path: Path, job: dict[str, Any], says: str
) -> None:
    config = job_config(tmp_path, job)
    for command in (["check", "-c", config], ["crawl", "-c", config, "http://a.test/"]):
        proc = nadird(*command)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"nadird: error: {config}: "), proc.stderr
        assert says in proc.stderr, proc.stderr


def test_parse_shows_the_fields_and_links_of_a_json_page(tmp_path: Path) -> None:
    catalog = Catalog(count=8, per_page=5)
    config = job_config(tmp_path, CATALOG_JOB)
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        catalog.mount(web)
        base = f"http://shop.test:{web.port}"
        proc = nadird(
            "parse", f"{base}{API}?page=2", "-c", config, "--resolve", "*.test=127.0.0.1",
            "--allow-private",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["fields"]["ids"] == [5, 6, 7]
    assert shown["links"] == [
        f"{base}{API}?page=3",
        *(f"{base}/catalog/item/{i}" for i in (5, 6, 7)),
        *(f"{base}{API}/{i}" for i in (5, 6, 7)),
    ]
