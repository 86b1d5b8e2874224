"""The web console in headless Chromium against a running crawl (master and
worker processes, the synthetic web): sign in, the numbers of /api/stats,
pause and resume, a dead letter retried. Every request the browser makes must
stay on loopback. A screenshot of each page is saved in
test-artifacts/console/ (at the repository's top).
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from support import REPO
from support.flaky import FlakyRoutes
from support.jspages import browser_missing

from nadird.master.console.pages import error_count
from nadird.testing.checks import site_job
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

MISSING = browser_missing()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(MISSING is not None, reason=MISSING or "")]
ARTIFACTS = REPO / "test-artifacts" / "console"
LOOPBACK = {"127.0.0.1", "localhost"}


def api_stats(url: str, token: str) -> dict[str, Any]:
    request = urllib.request.Request(
        url + "/api/stats", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        stats: dict[str, Any] = json.loads(response.read())
    return stats


def start(cluster: Cluster, seeds: list[str]) -> tuple[str, str]:
    graph = SiteGraph(hosts=2, pages=30)
    config = cluster.master_config(
        jobs={**site_job(graph, max_retries=1), "other": {}},
        seeds=seeds,
        master={
            "exit_when_done": False,
            "retry_base_delay": 0.05,
            "retry_max_delay": 0.1,
            "dead_letter_poll": 0.2,
        },
    )
    cluster.start("master", "master", config)
    cluster.start("worker", "w1", cluster.worker_config(1))
    state = cluster.workdir / "state"
    assert wait_until(lambda: (state / "api.json").exists(), 20)
    url = json.loads((state / "api.json").read_text())["url"]
    return url, (state / "api.token").read_text().strip()


@pytest.fixture
def crawl(cluster: Cluster) -> Iterator[tuple[str, str, FlakyRoutes, str]]:
    routes = FlakyRoutes()
    graph = SiteGraph(hosts=2, pages=30)
    with run_in_thread(graph) as web:
        routes.install(web)
        graph.port = web.port
        broken = f"http://broken.test:{web.port}/broken/0"
        url, token = start(cluster, [*graph.seeds(), broken])
        yield url, token, routes, broken


def test_the_console_in_a_browser(crawl: tuple[str, str, FlakyRoutes, str]) -> None:
    from playwright.sync_api import sync_playwright

    url, token, routes, broken = crawl
    # The crawl ends with the broken URL dead-lettered (two tries).
    assert wait_until(lambda: api_stats(url, token)["complete"], 60)
    assert api_stats(url, token)["dead_letters"] == 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    requested: list[str] = []
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda request: requested.append(request.url))
            page.on("console", lambda msg: msg.type == "error" and problems.append(msg.text))
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.route("**/*", lambda route: route.continue_())
            run_console(page, url, token, routes, broken)
        finally:
            browser.close()
    assert requested, "the browser made no request"
    outside = [u for u in requested if urlsplit(u).hostname not in LOOPBACK]
    assert outside == [], outside
    # The 401s are the shells of the pages navigated to (asked again with the
    # key by console.js) and the login pages; nothing else failed (a CSP
    # violation or a script error would be listed here).
    assert [p for p in problems if "status of 401" not in p] == [], problems
    for name in ("login", "crawl", "jobs", "domains", "workers", "dead-letters", "alerts"):
        assert (ARTIFACTS / f"{name}.png").stat().st_size > 1000


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def shown(page: Any) -> None:
    """After a navigation: its shell has asked for the page with the key and shows it."""
    page.wait_for_selector("body[data-shown]")


def run_console(page: Any, url: str, token: str, routes: FlakyRoutes, broken: str) -> None:
    response = page.goto(url + "/ui")
    assert response.status == 401  # the shell, whatever the cookie
    page.wait_for_selector("#token")
    assert page.inner_text("main p.hint").startswith("Paste the API token")  # a prompt, no error
    shot(page, "login")
    page.fill("#token", "a wrong token, long enough")
    page.click("button[type=submit]")
    assert "Wrong token" in page.inner_text(".problem")
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_selector("#numbers")
    see_the_numbers(page, url, token)
    stats = api_stats(url, token)
    pause_and_resume(page, url, token)
    for name in ("domains", "workers", "alerts", "changes", "errors"):
        page.click(f"nav a[href='/ui/{name}']")
        shown(page)
        shot(page, name)
    assert "http 500" in page.inner_text("main")  # the errors page, shown last
    assert broken in page.inner_text("main")
    page.goto(url + "/ui/domains?sort=errors")
    shown(page)
    rows = [
        [cell.inner_text() for cell in row.query_selector_all("td")]
        for row in page.query_selector_all("table.domains tbody tr")
    ]
    errors = [int(row[7]) for row in rows]
    assert errors == sorted(errors, reverse=True) and sum(errors) == error_count(stats)
    [broken_row] = [row for row in rows if row[0] == "broken.test"]
    assert broken_row[7] == "2" and broken_row[8] == "500"  # two tries, both 500
    retry_the_dead_letter(page, url, token, routes, broken)
    page.click("form.logout button")
    page.wait_for_selector("#token")
    assert page.goto(url + "/ui/jobs").status == 401
    page.wait_for_selector("#token")  # signed out: the shell gets the login form


def see_the_numbers(page: Any, url: str, token: str) -> None:
    """The crawl is over: every number on the page is /api/stats's, refreshed by console.js."""
    page.wait_for_selector("body[data-refreshed]", timeout=15_000)
    stats = api_stats(url, token)
    shown = {
        key: page.inner_text(f"[data-stat={key}]")
        for key in ("stored", "queued", "errors", "dead_letters", "seen", "eta")
    }
    assert shown == {
        "stored": f"{stats['stored_total']:,}",
        "queued": f"{stats['queued']:,}",
        "errors": f"{error_count(stats):,}",
        "dead_letters": "1",
        "seen": f"{stats['seen']:,}",
        "eta": "done",
    }
    assert stats["stored_total"] > 20 and stats["http_status"]["5xx"] == 2
    shot(page, "crawl")


def pause_and_resume(page: Any, url: str, token: str) -> None:
    page.click("nav a[href='/ui/jobs']")
    row = "tr[data-job=default]"
    page.click(f"{row} button:has-text('Pause')")
    page.wait_for_selector(".notice:has-text('Job default paused.')")
    assert page.inner_text(f"{row} .job-state") == "paused"
    assert api_stats(url, token)["paused_jobs"] == ["default"]
    shot(page, "jobs")
    page.click(f"{row} button:has-text('Resume')")
    page.wait_for_selector(".notice:has-text('Job default resumed.')")
    assert api_stats(url, token)["paused_jobs"] == []


def retry_the_dead_letter(
    page: Any, url: str, token: str, routes: FlakyRoutes, broken: str
) -> None:
    page.click("nav a[href='/ui/dead-letters']")
    shown(page)
    assert broken in page.inner_text("main")
    assert "http: status 500" in page.inner_text("main")
    shot(page, "dead-letters")
    path = urlsplit(broken).path
    assert routes.requests[("broken.test", path)] == 2
    routes.fixed = True
    page.click("td form button:has-text('Retry')")
    page.wait_for_selector(".notice:has-text('1 dead letters marked for retry')")
    # Fetched again (the synthetic web saw it), stored, and no longer dead.
    assert wait_until(lambda: routes.requests[("broken.test", path)] == 3, 30)
    assert wait_until(lambda: api_stats(url, token)["complete"], 30)
    page.reload()
    shown(page)
    assert "No dead letters." in page.inner_text("main")
