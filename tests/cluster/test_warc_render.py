"""A rendered page in the archive: its response as fetched, the sub-requests
the browser made (the worker fetched them), and the DOM the browser made of it
as a `conversion` record (nadird crawl --render --warc).

Skipped without Playwright or Chromium (.ci/run installs both).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.jspages import JsSite, browser_missing
from test_render_crawl import crawl
from test_warc_crawl import read_records

from nadird.master.archive.records import EXTRA_URI
from nadird.testing.web import run_in_thread

MISSING = browser_missing()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(MISSING is not None, reason=MISSING or ""),
]


def test_a_rendered_page_keeps_its_response_and_the_dom_the_browser_made(
    tmp_path: Path,
) -> None:
    js = JsSite(items=2)
    warc_dir = tmp_path / "warc"
    with run_in_thread() as web:
        js.install(web)
        stored = crawl(tmp_path / "crawl", js, "--render", "--warc", str(warc_dir))
    records = read_records(warc_dir)
    responses = {r["headers"]["WARC-Target-URI"] for r in records if r["type"] == "response"}
    # What the browser asked for, the worker fetched: its script and the
    # item data it loaded are exchanges of the archive too.
    assert {js.url("/js/app.js"), *(js.url(f"/js/api/item/{i}") for i in range(2))} <= responses
    for i, path in enumerate(js.item_paths()):
        url = js.url(path)
        title = JsSite.item_fields(i)["title"].encode()
        [response] = [
            r for r in records if r["type"] == "response" and r["headers"]["WARC-Target-URI"] == url
        ]
        [dom] = [
            r
            for r in records
            if r["headers"].get("WARC-Target-URI") == f"{EXTRA_URI}conversion:{url}"
        ]
        # The server's page has no title yet; its script wrote it in the browser.
        assert title not in response["payload"] and title in dom["payload"]
        assert dom["type"] == "conversion"
        assert dom["headers"]["WARC-Refers-To"] == response["headers"]["WARC-Record-ID"]
        [meta] = [
            r
            for r in records
            if r["headers"].get("WARC-Target-URI") == f"{EXTRA_URI}metadata:{url}"
        ]
        decided = json.loads(meta["payload"])
        assert decided["rendered"] is True and decided["fields"] == stored[path]["data"]
