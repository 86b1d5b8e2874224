"""`nadird parse URL`: one page through the worker's own fetch and parse code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web as aioweb
from support.jspages import FIELDS, READY, JsSite, browser_missing

from nadird.testing import forkserver
from nadird.testing.checks import page_requests, site_job
from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow


def parse(
    tmp_path: Path, web: SyntheticWeb, url: str, *extra: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None]:
    config = tmp_path / "jobs.yaml"
    config.write_text(yaml.safe_dump({"jobs": {**site_job(web.graph), "bare": {}}}))
    proc = forkserver.run(
        [
            sys.executable,
            "-m",
            "nadird",
            "parse",
            "--resolve",
            "*.test=127.0.0.1",
            url,
            "-c",
            str(config),
            "--allow-private",
            *extra,
        ],
        timeout=60,
    )
    return proc, json.loads(proc.stdout) if proc.stdout.strip() else None


def test_parse_prints_the_fields_and_links_a_worker_would_send(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=3, pages=30)
    with run_in_thread(graph) as web:
        url = graph.url("site-1.test", "/p/4")
        proc, result = parse(tmp_path, web, url)
        assert proc.returncode == 0, proc.stderr
        assert result is not None
        assert result["status"] == 200 and result["error"] is None
        assert result["fields"] == graph.expected_fields(url)
        # The job's link rules: the site hosts, not /private/, in document order.
        assert result["links"] == [u for u in graph.out_links(url) if graph.in_site_scope(u)]
        assert result["links"]
        # One page fetched, robots.txt first, as a worker does.
        assert [e.path for e in web.entries()] == ["/robots.txt", "/p/4"]

        # Another job of the same file: no fields, and the default scope (same domain).
        proc, bare = parse(tmp_path, web, url, "--job", "bare")
        assert proc.returncode == 0, proc.stderr
        assert bare is not None and bare["fields"] == {}
        assert bare["links"] == [u for u in graph.out_links(url) if "//site-1.test" in u]
        # Which parser read the page, and why (the default job's title is XPath).
        assert result["parser"] == "lxml (auto: fields.title[0] is XPath)"
        assert bare["parser"] == "lexbor (auto: no rule of the job needs lxml)"


async def _syndicated(request: aioweb.Request, host: str) -> aioweb.Response:
    """A copy of a story that names its original as canonical."""
    return aioweb.Response(
        text='<html><head><title>Copy</title><link rel="canonical" href="/story/1">'
        "</head><body><h1>Copy</h1><p>The story.</p></body></html>",
        content_type="text/html",
    )


def test_parse_says_why_a_page_left_to_its_canonical_url_has_no_fields(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=1, pages=10)
    with run_in_thread(graph) as web:
        web.add_route("/copy/", _syndicated)
        url = graph.url("site-0.test", "/copy/1")
        proc, result = parse(tmp_path, web, url, "--article")
        assert proc.returncode == 0, proc.stderr
        assert result is not None and result["fields"] == {}
        original = graph.url("site-0.test", "/story/1")
        assert result["canonical"] == original and result["links"] == [original]
        assert result["note"].startswith(f"the page names {original} as its canonical URL")
        # A page extracted itself carries no note.
        proc, own = parse(tmp_path, web, graph.url("site-0.test", "/p/1"))
        assert own is not None and own["fields"] and "note" not in own


def test_parse_reports_what_the_worker_would_record_and_exits_1(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=1, pages=10)
    with run_in_thread(graph) as web:
        private = graph.url("site-0.test", "/private/secret")
        proc, result = parse(tmp_path, web, private)
        assert proc.returncode == 1
        assert result is not None and result["error"] == "robots: disallowed"
        assert page_requests(web) == []  # robots.txt forbids it: never fetched


def test_parse_refuses_an_unknown_job_or_a_bad_url(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=1, pages=10)
    with run_in_thread(graph) as web:
        proc, _ = parse(tmp_path, web, graph.seeds()[0], "--job", "shoes")
        assert proc.returncode == 2
        assert proc.stderr.strip().endswith("--job: one of: bare, default")
        proc, _ = parse(tmp_path, web, "site-0.test/")
        assert proc.returncode == 2 and "has no scheme" in proc.stderr
        assert web.entries() == []


def test_parse_without_allow_private_refuses_loopback_as_a_worker_does(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=1, pages=10)
    with run_in_thread(graph) as web:
        proc = forkserver.run(
            [
                sys.executable,
                "-m",
                "nadird",
                "parse",
                graph.seeds()[0],
                "--resolve",
                "*.test=127.0.0.1",
            ],
            timeout=60,
        )
        assert proc.returncode == 1
        assert json.loads(proc.stdout)["error"].startswith("blocked_address")
        assert web.entries() == []


@pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")
def test_parse_renders_when_the_job_renders(tmp_path: Path) -> None:
    js = JsSite(items=3)
    job = {"fields": FIELDS, "render_wait_for": READY, "render_max_wait": 5}
    config = tmp_path / "js.yaml"
    config.write_text(yaml.safe_dump({"jobs": {"plain": job, "js": {**job, "render": True}}}))
    with run_in_thread() as web:
        js.install(web)
        found = {}
        for name in ("plain", "js"):
            options = ["-c", str(config), "--job", name, "--resolve", "*.test=127.0.0.1"]
            proc = forkserver.run(
                [sys.executable, "-m", "nadird", "parse", js.seed(), *options, "--allow-private"],
                timeout=120,
            )
            assert proc.returncode == 0, proc.stderr[-3000:]
            found[name] = json.loads(proc.stdout)
    assert found["plain"]["rendered"] is False and found["plain"]["fields"]["title"] is None
    assert found["js"]["rendered"] is True and found["js"]["fields"]["title"] == "JS shop"
    assert len(found["js"]["links"]) > len(found["plain"]["links"])
