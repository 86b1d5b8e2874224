"""The console in headless Chromium for the browser tests: a page that
records every request and every script error, signed in as a user would,
with screenshots under test-artifacts/console/, and the API read with the
token alongside."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from support import REPO

ARTIFACTS = REPO / "test-artifacts" / "console"
LOOPBACK = {"127.0.0.1", "localhost"}


@dataclass
class Seen:
    requested: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # console errors, uncaught exceptions


@contextmanager
def console_page(origin: str | None = None, clipboard: bool = False) -> Iterator[Any]:
    """A Chromium page (1280x900); on leaving, nothing was asked of another
    host and no script failed (the 401s are the shells of pages navigated to)."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    seen = Seen()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            if clipboard and origin is not None:
                context.grant_permissions(["clipboard-read", "clipboard-write"], origin=origin)
            page = context.new_page()
            page.on("request", lambda request: seen.requested.append(request.url))
            page.on("console", lambda msg: msg.type == "error" and seen.problems.append(msg.text))
            page.on("pageerror", lambda exc: seen.problems.append(str(exc)))
            yield page
        finally:
            browser.close()
    outside = [u for u in seen.requested if urlsplit(u).hostname not in LOOPBACK]
    assert outside == [], outside
    assert [p for p in seen.problems if "status of 401" not in p] == [], seen.problems


def sign_in(page: Any, url: str, token: str) -> None:
    assert page.goto(url + "/ui").status == 401
    page.wait_for_selector("#token")
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_selector("#numbers")


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def api(url: str, token: str, path: str) -> Any:
    request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())
