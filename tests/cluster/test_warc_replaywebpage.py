"""The WACZ `nadird warc pack` writes, opened in ReplayWeb.page (Webrecorder's
in-browser replay) in headless Chromium: the crawl of the archive's synthetic
web (plain, gzip- and Brotli-encoded answers, revisits) packed, served with
ReplayWeb.page's files from loopback, each page's text read back from inside
the replay's frame, and the list of pages read from the app."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from support import replaywebpage
from support.archive_web import PREFIX, ArchiveWeb, page_html
from support.jspages import browser_missing

from nadird.testing import forkserver
from nadird.testing.cluster import wait_until
from nadird.testing.web import SyntheticWeb, run_in_thread

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

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
    """A crawl that fetched each page again (--revisit 1s) until /a/etag was
    answered 304 and /a/same came back unchanged twice, then stopped, packed."""
    tmp = tmp_path_factory.mktemp("rwp")
    warc_dir = tmp / "warc"
    with run_in_thread() as site:
        archive_web = ArchiveWeb().install(site)
        origin = f"http://127.0.0.1:{site.port}"
        args = [
            sys.executable, "-m", "nadird", "crawl", origin + PREFIX, "--allow-private",
            "--delay", "0", "--workers", "1", "--revisit", "1s", "--warc", str(warc_dir),
            "--store", f"sqlite:///{tmp / 'crawl.db'}",
        ]  # fmt: skip
        crawl = subprocess.Popen(args, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            revisited = wait_until(
                lambda: archive_web.not_modified >= 1 and archive_web.hits[PREFIX + "same"] >= 3,
                40,
            )
        finally:
            crawl.send_signal(signal.SIGTERM)  # closes the files
            _, stderr = crawl.communicate(timeout=30)
    assert revisited, stderr[-3000:]
    wacz = tmp / "crawl.wacz"
    done = nadird("warc", "pack", str(warc_dir), str(wacz), cwd=tmp)
    assert done.returncode == 0, done.stderr[-2000:]
    return Packed(wacz, origin, dict(archive_web.sent))


def nadird(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return forkserver.run([sys.executable, "-m", "nadird", *args], cwd=cwd, timeout=60)


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


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def show(browser: Browser, player: SyntheticWeb) -> Iterator[Callable[[str, str], Page]]:
    """Opens the embedding page for a URL ("" for the list of pages) at the
    capture nearest a time (14 digits; "" for the latest), each in a context of
    its own (a fresh service worker); every request must stay on loopback."""
    requested: list[str] = []
    contexts: list[BrowserContext] = []

    def open_page(url: str, ts: str = "") -> Page:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"http://127.0.0.1:{player.port}/embed?url={url}&ts={ts}")
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert requested, "the browser made no request"
    outside = [u for u in requested if urlsplit(u).hostname not in LOOPBACK]
    assert outside == [], outside


# The latest capture of each: /a/same's is an identical-payload revisit,
# which ReplayWeb.page resolves to the copy it refers to.
@pytest.mark.parametrize("name", ["plain", "gzip", "br", "same"])
def test_replaywebpage_shows_the_archived_page(
    packed: Packed, player: SyntheticWeb, show: Callable[[str, str], Page], name: str
) -> None:
    url = packed.origin + PREFIX + name
    sent = packed.sent[PREFIX + name]  # the site served it, so the crawl archived it
    assert (sent == page_html(name)) == (name in ("plain", "same"))  # gzip and br went encoded
    text = replayed_text(show(url, ""), url)
    log = [(e.path.split("?")[0], e.status) for e in player.entries()]
    assert f"{name} archived words" in text, (text[:800], log)
    # The page came out of the package (the crawled site is closed by now).
    assert ("/crawl.wacz", 206) in log or ("/crawl.wacz", 200) in log, log


def test_a_page_answered_304_later_replays_at_its_full_capture(
    packed: Packed, show: Callable[[str, str], Page]
) -> None:
    url = packed.origin + PREFIX + "etag"
    first = first_capture(packed.wacz, url)
    text = replayed_text(show(url, first), url)
    assert "etag archived words" in text, text[:800]


def first_capture(wacz: Path, url: str) -> str:
    """The 14-digit time of the first capture of `url`, from pages.jsonl."""
    with zipfile.ZipFile(wacz) as package:
        lines = package.read("pages/pages.jsonl").decode().splitlines()[1:]
    [ts] = [json.loads(line)["ts"] for line in lines if json.loads(line)["url"] == url]
    return "".join(c for c in ts if c.isdigit())[:14]


def test_replaywebpage_lists_the_pages_of_pages_jsonl(
    packed: Packed, show: Callable[[str, str], Page]
) -> None:
    app = show("", "").frame_locator("replay-web-page iframe")  # CSS goes through shadow roots
    app.get_by_text(f"{len(packed.sent)} pages", exact=True).wait_for(timeout=40_000)
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
