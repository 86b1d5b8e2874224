"""The WACZ `nadird warc pack` writes, opened in ReplayWeb.page (Webrecorder's
in-browser replay) in headless Chromium: the crawl of the archive's synthetic
web (plain, gzip- and Brotli-encoded answers) packed, served with
ReplayWeb.page's files from loopback, and each page's text read back from
inside the replay's frame."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from support import replaywebpage
from support.archive_web import PREFIX, ArchiveWeb, page_html
from support.jspages import browser_missing

from nadird.testing.web import SyntheticWeb, run_in_thread

if TYPE_CHECKING:
    from playwright.sync_api import Page

# In CI (.ci/run installs Chromium) a missing browser fails the test instead.
MISSING = None if os.environ.get("CI") == "true" else browser_missing()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]
LOOPBACK = {"127.0.0.1", "localhost"}


@dataclass
class Packed:
    wacz: Path
    origin: str  # the crawled site's http://127.0.0.1:PORT (closed by now)
    sent: dict[str, bytes]  # path -> body as the site sent it


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Packed:
    tmp = tmp_path_factory.mktemp("rwp")
    warc_dir = tmp / "warc"
    with run_in_thread() as site:
        archive_web = ArchiveWeb().install(site)
        origin = f"http://127.0.0.1:{site.port}"
        crawl = nadird(
            "crawl", origin + PREFIX, "--allow-private", "--delay", "0", "--workers", "1",
            "--warc", str(warc_dir), "--store", f"sqlite:///{tmp / 'crawl.db'}", cwd=tmp,
        )  # fmt: skip
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    wacz = tmp / "crawl.wacz"
    done = nadird("warc", "pack", str(warc_dir), str(wacz), cwd=tmp)
    assert done.returncode == 0, done.stderr[-2000:]
    return Packed(wacz, origin, dict(archive_web.sent))


def nadird(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nadird", *args], cwd=cwd, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip


@pytest.fixture(scope="module")
def player(packed: Packed) -> Iterator[SyntheticWeb]:
    """ReplayWeb.page's files, the embedding page and the WACZ, on loopback
    (a service worker needs a secure context: http://127.0.0.1 is one)."""
    files = replaywebpage.ensure()
    if isinstance(files, str):
        pytest.fail(files)
    with run_in_thread() as server:
        replaywebpage.install(server, files, packed.wacz)
        yield server


@contextmanager
def opened(player: SyntheticWeb, url: str) -> Iterator[tuple[Page, list[str]]]:
    """The embedding page for `url` ("" for the list of pages) in headless
    Chromium, and the URLs the browser asked for."""
    from playwright.sync_api import sync_playwright

    requested: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda request: requested.append(request.url))
            page.goto(f"http://127.0.0.1:{player.port}/embed?url={url}")
            yield page, requested
        finally:
            browser.close()
    outside = [u for u in requested if urlsplit(u).hostname not in LOOPBACK]
    assert outside == [], outside


@pytest.mark.parametrize("name", ["plain", "gzip", "br"])
def test_replaywebpage_shows_the_archived_page(
    packed: Packed, player: SyntheticWeb, name: str
) -> None:
    url = packed.origin + PREFIX + name
    sent = packed.sent[PREFIX + name]  # the site served it, so the crawl archived it
    assert (sent == page_html(name)) == (name == "plain")  # gzip and br went encoded
    with opened(player, url) as (page, _):
        text = replayed_text(page, url)
    log = [(e.path.split("?")[0], e.status) for e in player.entries()]
    assert f"{name} archived words" in text, (text[:800], log)
    # The page came out of the package (the crawled site is closed by now).
    assert ("/crawl.wacz", 206) in log or ("/crawl.wacz", 200) in log, log


def test_replaywebpage_lists_the_pages_of_pages_jsonl(packed: Packed, player: SyntheticWeb) -> None:
    with opened(player, "") as (page, _):
        app = page.frame_locator("replay-web-page iframe")  # CSS goes through shadow roots
        listed = app.get_by_text(f"{len(packed.sent)} pages", exact=True)
        listed.wait_for(timeout=40_000)
        entries = app.locator("wr-page-entry .page-url keyword-mark")
        shown = entries.evaluate_all("marks => marks.map(mark => mark.title)")
    # Each page once, under its URL (and as its title: pages.jsonl gives none).
    assert sorted(shown) == sorted(packed.origin + path for path in packed.sent)


def replayed_text(page: Page, url: str) -> str:
    """The body text of the replay frame that shows `url`, once it is there."""
    for _ in range(160):  # 40 s at most
        for frame in page.frames:
            if frame.url.endswith("/" + url):
                body = frame.locator("body")
                if body.count():
                    return body.inner_text(timeout=5000)
        page.wait_for_timeout(250)
    return "no frame replays " + url + ": " + ", ".join(f.url for f in page.frames)
