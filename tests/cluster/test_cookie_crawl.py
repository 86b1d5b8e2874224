"""Cookies within a crawl, against the synthetic web's cookie gate
(tests/support/cookiegate.py): pages that need the cookies other pages and
a redirect set, crawled by two jobs on two domains, with a third job that
keeps no jar. The access log says which cookies went where."""

from __future__ import annotations

import json
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.cookiegate import ANTIBOT, CONSENT, PREFIX, CookieGate
from test_crawl_command import crawl, records, summary

from nadird.testing.access import AccessEntry
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow
HOSTS = ("jar-1.test", "jar-2.test")
PAGES = 4


def sent_cookies(entry: AccessEntry) -> dict[str, str]:
    parsed = SimpleCookie()
    parsed.load(entry.headers.get("cookie", ""))
    return {name: morsel.value for name, morsel in parsed.items()}


def query_of(entry: AccessEntry) -> str:
    return urlsplit(entry.path).query


def test_cookies_set_by_pages_and_redirects_go_back_to_their_own_job_and_domain(
    tmp_path: Path,
) -> None:
    fields = {"title": [{"css": "h1.title"}]}
    jobs = {
        "a": {"fields": fields},
        "b": {"fields": fields},
        "off": {"fields": fields, "cookie_jar": False},
    }
    config = tmp_path / "jar.yaml"
    config.write_text(json.dumps({"jobs": jobs}))
    gate = CookieGate(pages=PAGES)
    with run_in_thread() as web:
        gate.install(web)
        lines = [
            {"url": f"http://{host}:{web.port}{PREFIX}/?j={job}", "job": job}
            for job in ("a", "b")
            for host in HOSTS
        ]
        lines.append({"url": f"http://{HOSTS[0]}:{web.port}{PREFIX}/?j=off", "job": "off"})
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("".join(json.dumps(line) + "\n" for line in lines))
        # One worker: the pages come in later bags of the domain than the
        # page and the redirect that set the cookies (the jar outlives a bag).
        extra = ("-c", str(config), "--seeds", str(seeds), "--workers", "1")
        proc, store = crawl(tmp_path, web, *extra, seeds=[])
        entries = [e for e in web.entries() if e.path.startswith(PREFIX)]
    assert summary(proc)["complete"] is True
    stored = records(store)
    # Jobs a and b read every page of both domains: the cookies went back.
    for job in ("a", "b"):
        titles = {
            (urlsplit(r.url).hostname, r.data.get("title"))
            for r in stored
            if r.url.endswith(f"j={job}") and "/p/" in r.url and r.status == 200
        }
        assert titles == {(h, f"jar page {n}") for h in HOSTS for n in range(PAGES)}, job
    # The gate set its cookie on a redirect to itself, and was asked again with it.
    gates = [e for e in entries if e.path.startswith(f"{PREFIX}/gate") and e.host == HOSTS[0]]
    redirected = [e for e in gates if query_of(e) == "j=a"]
    assert [e.status for e in redirected] == [302, 200]
    assert ANTIBOT not in sent_cookies(redirected[0]) and ANTIBOT in sent_cookies(redirected[1])
    assert all(set(sent_cookies(e)) == {CONSENT, ANTIBOT} for e in entries if "/p/" in e.path)
    # No cookie ever went to another domain or another job's pages.
    for entry in entries:
        for name, value in sent_cookies(entry).items():
            issued = gate.issued_for(value)
            assert issued is not None and issued.name == name, entry
            assert (issued.host, issued.query) == (entry.host, query_of(entry)), entry
    # The job without a jar sent nothing back: the gate refused it.
    off = [e for e in entries if query_of(e) == "j=off"]
    assert [(e.path.split("?")[0], e.status) for e in off] == [
        (f"{PREFIX}/", 200),
        (f"{PREFIX}/gate", 403),
    ]
    assert all("cookie" not in e.headers for e in off)
