"""What a crawl of article pages counts, per job: fields that took their
generic step, and pages whose article extraction was given up, by reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.articles import BAD_PAGES, PAGES, PREFIX, route
from test_crawl_command import crawl, records, summary

from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def test_a_crawl_counts_generic_steps_and_given_up_pages(tmp_path: Path) -> None:
    job = {
        "max_depth": 1,
        # Every page but the 55,000-character nested one is under the cap.
        "article": {"max_html_chars": 20_000},
        "fields": {"headline": [{"css": "h1.headline-v2"}, {"article": "title"}]},
    }
    config = tmp_path / "news.yaml"
    config.write_text(json.dumps({"jobs": {"default": job}}))
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route(PREFIX, route)
        seed = f"http://news.test:{web.port}{PREFIX}"
        proc, store = crawl(tmp_path, web, "-c", str(config), seeds=[seed])
    result = summary(proc)
    stored = {r.url.rsplit(PREFIX, 1)[1]: r.data for r in records(store)}
    assert stored["bad/deep"]["_article"] == "too_large"
    assert stored["bad/binary"] == {}
    titled = [path for path, data in stored.items() if data.get("headline")]
    assert all(stored[path]["_fallback"] == ["headline"] for path in titled)
    # The home page, PAGES and the bad pages but the deep one and the binary one.
    assert len(titled) == 1 + len(PAGES) + len(BAD_PAGES) - 2
    assert result["fallback_extractions"] == {"default": {"headline": len(titled)}}
    assert result["article_given_up"] == {"default": {"too_large": 1, "unparsable": 1}}
