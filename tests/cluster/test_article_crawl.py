"""`article: true` end to end: `nadird parse`, a `nadird crawl` over a web of
articles, hubs, a product, a login wall and broken pages (store and export),
and `nadird reextract` filling the fields of pages stored before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.articles import ARTICLE_TEXT, NOT_TEXT, PAGES, PREFIX, route
from support.cli_helpers import nadird
from support.reextract_helpers import reextract, summary_of
from test_crawl_command import crawl, records, summary

from nadird.common.errors import ErrorKind
from nadird.job.article import ARTICLE_FIELDS
from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow

# Every page of the web is one link from its home page.
ARTICLE_JOB: dict[str, Any] = {"article": True, "max_depth": 1}


def config(tmp_path: Path, name: str, job: dict[str, Any], store: Path | None = None) -> Path:
    path = tmp_path / name
    top: dict[str, Any] = {"jobs": {"default": job}}
    if store is not None:
        top["store"] = {"uri": f"sqlite:///{store}"}
    path.write_text(json.dumps(top))  # JSON is YAML
    return path


def crawl_news(tmp_path: Path, web: SyntheticWeb, job: dict[str, Any], *extra: str) -> Path:
    web.add_route(PREFIX, route)
    seed = f"http://news.test:{web.port}{PREFIX}"
    proc, store = crawl(tmp_path, web, "-c", str(config(tmp_path, "crawl.yaml", job)), *extra,
                        seeds=[seed])  # fmt: skip
    summary(proc)
    return store


def by_path(store: Path) -> dict[str, Any]:
    return {r.url.split(":", 2)[2].split("/", 1)[1]: r for r in records(store)}


def check_pages(found: dict[str, dict[str, Any]]) -> None:
    """The fields of every page of PAGES (keyed by path without its leading /)."""
    for page in PAGES:
        data = found[page.path[1:]]
        assert data["kind"] == page.kind, page.file
        assert set(ARTICLE_FIELDS) <= set(data)
        if page.kind != "article":
            assert data["text"] is None, page.file
            continue
        for sentence in ARTICLE_TEXT[page.file]:
            assert sentence in data["text"]
        assert not any(junk in data["text"] for junk in NOT_TEXT)
        assert data["markdown"].startswith("# ")


def test_a_crawl_stores_and_exports_the_article_fields(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        # `--article` on the command line: the job of the config has no rule.
        store = crawl_news(tmp_path, web, {"max_depth": 1}, "--article", "--out", str(out))
    stored = by_path(store)
    check_pages({path: r.data for path, r in stored.items()})
    exported = {
        row["url"].split(":", 2)[2].split("/", 1)[1]: row["data"]
        for row in map(json.loads, out.read_text().splitlines())
    }
    check_pages(exported)
    news = stored["news/2026/03/14/harbour-tunnel-reopens"].data
    assert news["published"] == "2026-03-14T09:30:00+01:00"
    assert news["authors"] == ["Mara Lindqvist", "Tomás Ferreira"]
    # Broken pages: read where they can be, never a stalled or failed crawl.
    assert stored["news/bad/gbk"].data["language"] == "zh"
    assert stored["news/bad/no-body"].data["kind"] == "other"
    assert stored["news/bad/deep"].data["text"] is None
    binary = stored["news/bad/binary"]
    assert binary.error_kind == ErrorKind.PARSE and binary.data == {}


def test_nadird_parse_prints_the_article_fields(tmp_path: Path) -> None:
    # A fresh process: its imports and model loading (over a second) are not
    # charged to the first page's budget.
    job = config(tmp_path, "parse.yaml", {"article": {"budget": 0.5}})
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route(PREFIX, route)
        url = f"http://news.test:{web.port}{PAGES[1].path}"
        done = nadird(
            "parse", url, "-c", str(job), "--resolve", "*.test=127.0.0.1", "--allow-private"
        )
    assert done.returncode == 0, done.stderr[-3000:]
    fields = json.loads(done.stdout)["fields"]
    assert "_article" not in fields
    assert fields["kind"] == "article"
    assert fields["title"] == "Sourdough at altitude: what I changed"
    assert fields["language"] == "en"


def test_reextract_fills_the_article_fields_of_pages_stored_without_them(
    tmp_path: Path,
) -> None:
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        store = crawl_news(tmp_path, web, {"max_depth": 1})
        fetched = len(web.entries())
    assert all(r.data == {} for r in records(store))
    # A budget no page can meet: every page is given up, counted by reason.
    tight = config(tmp_path, "tight.yaml", {**ARTICLE_JOB, "article": {"budget": 0.0001}}, store)
    done = summary_of(reextract(tmp_path, tight))
    readable = len(records(store)) - 1  # all but the binary page
    assert done["article_given_up"] == {"over_budget": readable}
    given_up = [r.data for r in records(store) if r.data]
    assert len(given_up) == readable
    assert all(data["_article"] == "over_budget" and data["kind"] is None for data in given_up)
    done = summary_of(reextract(tmp_path, config(tmp_path, "art.yaml", ARTICLE_JOB, store)))
    assert done["changed"] == readable and done["article_given_up"] == {}
    check_pages({path: r.data for path, r in by_path(store).items()})
    assert len(web.entries()) == fetched  # nothing fetched again


def test_a_worker_gives_up_pages_over_their_budget_and_goes_on(tmp_path: Path) -> None:
    # The worker's timer interrupts every page's extraction: the crawl
    # still fetches, stores and follows every page.
    job = {**ARTICLE_JOB, "article": {"budget": 0.0001}}
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        store = crawl_news(tmp_path, web, job)
    stored = by_path(store)
    assert len(stored) == len(PAGES) + 5  # the home page, PAGES and the four bad ones
    for path, record in stored.items():
        if path != "news/bad/binary":
            assert record.data["_article"] == "over_budget", path
            assert record.data["text"] is None
