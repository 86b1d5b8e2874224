"""Master and worker PROCESSES crawl the hostile corner of the synthetic web;
the server's access log says what the worker really did."""

from __future__ import annotations

import gzip
import itertools
import json
import sys
import threading
import time
from collections import defaultdict
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import psutil
import pytest
from support.hostile import HostileWeb, Page, html_page, sitemap_index, sitemap_xml
from support.hostile_helpers import hostile_web
from support.robots_helpers import GROUPS, STAR, STAR_VERDICTS

from nadird.store.base import PageRecord
from nadird.testing import forkserver
from nadird.testing.cluster import Cluster
from nadird.testing.web import AccessEntry, SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow

# Gaps are taken between arrivals as the server's kernel saw them (see
# nadird.testing.access.arrival_time), each right to one clock tick: up to two
# ticks (20 ms at HZ=100) off a gap, nothing from how busy the machine is.
SLACK = 0.03
FAST_FETCH: dict[str, Any] = {
    "connect_timeout": 1.0,
    "read_timeout": 1.0,
    "total_timeout": 3.0,
    "robots": {"error_ttl": 2.0},
    "throttle": {"backoff_base": 0.5, "max_delay": 2.0},
}


def crawl(
    cluster: Cluster,
    seeds: list[str],
    *,
    workers: int = 1,
    job: dict[str, Any] | None = None,
    master: dict[str, Any] | None = None,
    fetch: dict[str, Any] | None = None,
    timeout: float = 60.0,
) -> dict[str, PageRecord]:
    config = cluster.master_config(
        jobs={"default": {"max_retries": 0, **(job or {})}},
        seeds=seeds,
        master={"bag_size": 5, **(master or {})},
    )
    proc = cluster.start("master", "master", config)
    for i in range(1, workers + 1):
        cluster.start(
            "worker", f"w{i}", cluster.worker_config(i, **{**FAST_FETCH, **(fetch or {})})
        )
    assert cluster.wait(proc, timeout) == 0
    return {r.url: r for r in cluster.records()}


def by_host(entries: list[AccessEntry]) -> dict[str, list[AccessEntry]]:
    hosts: dict[str, list[AccessEntry]] = defaultdict(list)
    for entry in sorted(entries, key=lambda e: e.t_start):
        hosts[entry.host].append(entry)
    return hosts


def min_gap(entries: list[AccessEntry]) -> float:
    starts = sorted(e.arrived for e in entries)
    return min((b - a for a, b in itertools.pairwise(starts)), default=float("inf"))


def site(web: SyntheticWeb, hostile: HostileWeb, host: str, paths: list[str], **kw: Any) -> str:
    """A host whose home page links to `paths`, each a small page."""
    hostile.add_host(host, **kw)
    hostile.add_html(host, "/", paths)
    for path in paths:
        hostile.add_html(host, path)
    return f"http://{host}:{web.port}/"


# ------------------------------------------------------------------ robots.txt

ROBOTS_CASES: dict[str, tuple[str | int, dict[str, bool]]] = {
    # "/" is the home page that links to the others.
    "star.test": (STAR, {path: ok for path, ok in STAR_VERDICTS.items() if path != "/"}),
    "groups.test": (
        GROUPS,
        {f"/mine/{i}": False for i in range(2)}
        | {f"/everyone/{i}": True for i in range(3)}
        | {f"/x/{i}": True for i in range(3)},
    ),
    "none.test": (404, {"/a": True, "/private/x": True}),
}


def test_robots_rules_are_obeyed_and_crawl_delay_honoured(cluster: Cluster) -> None:
    with hostile_web() as (web, hostile):
        seeds = [site(web, hostile, h, list(c), robots=r) for h, (r, c) in ROBOTS_CASES.items()]
        hostile.add_host("all.test", robots="User-agent: *\nDisallow: /\n")
        hostile.add_html("all.test", "/", ["/a"])
        seeds.append(f"http://all.test:{web.port}/")
        records = crawl(cluster, seeds)
        hosts = by_host(web.entries())
    for host, (_robots, cases) in ROBOTS_CASES.items():
        fetched = [e.path for e in hosts[host]]
        assert fetched[0] == "/robots.txt" and fetched.count("/robots.txt") == 1
        allowed = {p for p, ok in cases.items() if ok}
        assert set(fetched[1:]) == {"/", *allowed}, host  # zero fetches of disallowed paths
        for path, ok in cases.items():
            record = records[f"http://{host}:{web.port}{path}"]
            assert (record.error is None) is ok, (host, path, record.error)
            if not ok:
                assert record.status == 0 and record.error == "robots: disallowed"
    assert [e.path for e in hosts["all.test"]] == ["/robots.txt"]
    assert records[f"http://all.test:{web.port}/"].error == "robots: disallowed"
    # Crawl-delay: 0.3 for our group, robots.txt fetch included.
    assert min_gap(hosts["groups.test"]) >= 0.3 - SLACK


# ------------------------------------------------------------------ order


@pytest.mark.parametrize("hubs_first", [True, False])
def test_hub_pages_are_fetched_before_the_pages_they_list(
    cluster: Cluster, hubs_first: bool
) -> None:
    items = [f"/item/{i}" for i in range(6)]
    hubs = ["/category/a", "/category/b"]
    with hostile_web() as (web, hostile):
        hostile.add_host("shop.test")
        hostile.add_html("shop.test", "/", [*items[:3], hubs[0], *items[3:], hubs[1]])
        for i, hub in enumerate(hubs):
            hostile.add_html("shop.test", hub, [f"/item/{10 + 2 * i}", f"/item/{11 + 2 * i}"])
        for path in [*items, *(f"/item/{n}" for n in range(10, 14))]:
            hostile.add_html("shop.test", path)
        job = {"robots": False} if hubs_first else {"robots": False, "hub_patterns": []}
        records = crawl(
            cluster,
            [f"http://shop.test:{web.port}/"],
            job=job,
            master={"bag_size": 4},
        )
        fetched = [e.path for e in by_host(web.entries())["shop.test"]]
    assert len(records) == 1 + 6 + 2 + 4 and fetched[0] == "/"
    if hubs_first:
        # Both categories before any item they sit among; then the rest by depth.
        assert fetched[1:3] == hubs
        assert set(fetched[3:9]) == set(items)
    else:
        assert fetched[1:5] == items[:3] + hubs[:1]  # document order: breadth-first only


# ------------------------------------------------------------------ pacing


def test_two_workers_never_go_below_the_effective_delay(cluster: Cluster) -> None:
    pages = [f"/p/{i}" for i in range(9)]
    with hostile_web() as (web, hostile):
        seeds = [site(web, hostile, f"gap-{n}.test", pages, robots="") for n in range(4)]
        slow = "User-agent: *\nCrawl-delay: 0.35\n"
        seeds.append(site(web, hostile, "crawl-delay.test", pages, robots=slow))
        records = crawl(cluster, seeds, workers=2, job={"delay": 0.2}, master={"bag_size": 3})
        hosts = by_host(web.entries())
    assert len(records) == 5 * 10 and all(r.status == 200 for r in records.values())
    workers_per_host = {h: {e.client for e in hits} for h, hits in hosts.items()}
    assert any(len(clients) == 2 for clients in workers_per_host.values()), workers_per_host
    for host, hits in hosts.items():
        want = 0.35 if host == "crawl-delay.test" else 0.2
        assert min_gap(hits) >= want - SLACK, (host, min_gap(hits))


# ------------------------------------------------------------- 429 / 503


def test_retry_after_keeps_every_worker_away_until_the_time_it_names(cluster: Cluster) -> None:
    pages = [f"/p/{i}" for i in range(6)]
    with hostile_web() as (web, hostile):
        seeds = [
            site(web, hostile, "t429.test", pages, robots=""),
            site(web, hostile, "t503.test", pages, robots=""),
            site(web, hostile, "backoff.test", pages, robots=""),
        ]
        rules = {
            "t429.test": hostile.throttle("t429.test", 429, "1", after=2),
            "t503.test": hostile.throttle("t503.test", 503, "date+2", after=3),
            "backoff.test": hostile.throttle("backoff.test", 429, None, after=1, times=2),
        }
        records = crawl(cluster, seeds, workers=2, job={"max_retries": 5})
        hosts = by_host(web.entries())
    # Every page stored once, as a 200: a 429/503 is handed back, never stored.
    assert len(records) == 3 * 7 and {r.status for r in records.values()} == {200}
    for host, rule in rules.items():
        hits = hosts[host]
        throttled = [i for i, e in enumerate(hits) if e.status in (429, 503)]
        assert len(throttled) == rule.times
        for i, sent in zip(throttled, rule.sent, strict=True):
            answered = hits[i].t_end
            if sent is None:  # exponential, per worker: 0.5 s, 1 s, ... in a row
                until = answered + 0.5 * 2 ** in_a_row(hits, i)
            elif sent.isdigit():
                until = answered + int(sent)
            else:
                until = parsedate_to_datetime(sent).timestamp()
            after = hits[i + 1]
            assert after.arrived >= until - SLACK, (host, after.arrived - until)


def test_a_site_that_always_throttles_ends_in_dead_letters(cluster: Cluster) -> None:
    from nadird.master.state.frontier_db import FrontierDB

    with hostile_web() as (web, hostile):
        seed = site(web, hostile, "always.test", [], robots="")
        hostile.throttle("always.test", 429, "0", after=0, times=1000)
        records = crawl(
            cluster,
            [seed],
            job={"max_retries": 2},
            master={"retry_base_delay": 0.05, "retry_max_delay": 0.1},
        )
        hits = by_host(web.entries())["always.test"]
    assert records == {}
    assert [e.status for e in hits if e.path != "/robots.txt"] == [429, 429, 429]  # try + 2 retries
    db = FrontierDB(cluster.workdir / "state" / "frontier.db")
    [letter] = db.dead_letters()
    db.close()
    assert letter.url == seed and letter.attempts == 3 and "throttled" in letter.error


def in_a_row(hits: list[AccessEntry], i: int) -> int:
    """Throttled answers the same worker got from the host just before hits[i]."""
    mine = [e for e in hits[:i] if e.client == hits[i].client]
    count = 0
    for entry in reversed(mine):
        if entry.status not in (429, 503):
            break
        count += 1
    return count


# ---------------------------------------------------------- hostile bodies

HOSTILE_PATHS = {
    "/bomb/gzip": "too_large",
    "/bomb/deflate": "too_large",
    "/bomb/br": "too_large",
    "/bomb/gzip-finite": "too_large",
    "/huge": "too_large",
    "/huge-declared": "too_large",
    "/stall": "timeout",
    "/hang": "timeout",
    "/trickle": "timeout",
    "/loop/a": "redirect_loop",
    "/redirect/15": "too_many_redirects",
}
FINE_PATHS = ["/ok", "/binary", "/wrong-charset", "/latin1", "/slow/0.2"]


TITLE = {"title": [{"xpath": "//title/text()"}]}


def peak_rss(pid: int, stop: threading.Event, peaks: list[int]) -> None:
    """Sample a process's high-water RSS (VmHWM) until stop or its exit."""
    try:
        proc = psutil.Process(pid)
        while not stop.is_set():
            status = Path(f"/proc/{pid}/status").read_text()
            hwm = next(line for line in status.splitlines() if line.startswith("VmHWM"))
            peaks.append(int(hwm.split()[1]) * 1024)
            peaks.append(proc.memory_info().rss)
            time.sleep(0.05)
    except (psutil.Error, OSError, StopIteration):
        return


def test_bombs_huge_bodies_and_hanging_servers_end_as_errors_with_bounded_memory(
    cluster: Cluster,
) -> None:
    pytest.importorskip("brotli")
    with hostile_web() as (web, hostile):
        hostile.add_host("h.test", robots="")
        hostile.add_html("h.test", "/", [*HOSTILE_PATHS, *FINE_PATHS, "/malformed"])
        hostile.add_html("h.test", "/ok")
        config = cluster.master_config(
            jobs={"default": {"max_retries": 0, "domain_concurrency": 4, "fields": TITLE}},
            seeds=[f"http://h.test:{web.port}/"],
        )
        master = cluster.start("master", "master", config)
        fetch = {**FAST_FETCH, "max_body_bytes": 4 << 20, "max_decoded_bytes": 2 << 20}
        fetch["total_timeout"] = 2.0
        worker = cluster.start("worker", "w1", cluster.worker_config(1, **fetch))
        stop, peaks = threading.Event(), []  # type: ignore[var-annotated]
        sampler = threading.Thread(target=peak_rss, args=(worker.popen.pid, stop, peaks))
        sampler.start()
        started = time.monotonic()
        assert cluster.wait(master, 60) == 0
        took = time.monotonic() - started
        stop.set()
        sampler.join()
    records = {r.url.split(str(web.port), 1)[1]: r for r in cluster.records()}
    letters = {
        letter["url"].split(str(web.port), 1)[1]: letter
        for letter in dead_letters(cluster.workdir / "state")
    }
    for path, kind in HOSTILE_PATHS.items():
        # Permanent failures are stored; transient ones (timeouts) end as dead letters.
        error = records[path].error if path in records else letters[path]["error"]
        assert error is not None and error.startswith(kind), (path, error)
    for path in FINE_PATHS:
        assert records[path].status == 200 and records[path].error is None, path
    # Charsets: a right <meta> is honoured; a wrong header costs characters, not a crash.
    assert records["/latin1"].data == {"title": "Caf\u00e9 cr\u00e8me"}
    assert str(records["/wrong-charset"].data["title"]).startswith("Caf")
    # Broken markup with NUL bytes: recorded (as binary, unparsed), never a crash.
    malformed = records["/malformed"]
    assert malformed.status == 200 and (malformed.error or "parse:").startswith("parse:")
    assert took < 30
    assert peaks and max(peaks) < 200 * 1024 * 1024, max(peaks)


def dead_letters(state_dir: Path) -> list[dict[str, Any]]:
    proc = forkserver.run(
        [sys.executable, "-m", "nadird", "dead-letters", "list", "--state-dir", str(state_dir)],
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


# ---------------------------------------------------------------- SSRF


def test_redirect_to_a_refused_address_is_blocked_and_never_arrives(cluster: Cluster) -> None:
    with hostile_web() as (web, hostile), run_in_thread(host="127.0.0.2") as inside:
        hostile.add_host("out.test", robots="")
        redirect = f"/to/inside.test/{inside.port}/secret"
        hostile.add_html("out.test", "/", [redirect, "/fine"])
        hostile.add_html("out.test", "/fine")
        direct = f"http://inside.test:{inside.port}/"
        fetch = {
            "allow_private": False,
            "allow_networks": ["127.0.0.1/32"],
            "resolve": {"*.test": "127.0.0.1", "inside.test": "127.0.0.2"},
        }
        seeds = [f"http://out.test:{web.port}/", direct]
        records = crawl(cluster, seeds, fetch=fetch, job={"links": {"scope": "any"}})
        assert inside.entries() == []  # not one request reached 127.0.0.2
        fetched = {e.path for e in web.entries()}
    assert fetched == {"/robots.txt", "/", redirect, "/fine"}
    blocked = records[f"http://out.test:{web.port}{redirect}"]
    assert blocked.status == 0 and (blocked.error or "").startswith("blocked_address")
    assert (records[direct].error or "").startswith("blocked_address")
    assert records[f"http://out.test:{web.port}/fine"].status == 200


# ------------------------------------------- canonical, nofollow, sitemaps, traps


def test_links_canonical_nofollow_sitemaps_and_traps(cluster: Cluster) -> None:
    with hostile_web() as (web, hostile):
        host, port = "p.test", web.port

        def u(path: str) -> str:
            return f"http://{host}:{port}{path}"

        hostile.add_host(host, robots=f"User-agent: *\nAllow: /\nSitemap: {u('/sm/index.xml')}\n")
        links = ["/a?utm_source=x", "/a?fbclid=1&utm_medium=y", "/a", "/b;jsessionid=XYZ"]
        links += ["/meta-nofollow", "/noindex", "/print", "/trap/x"]
        follow_no = '<a rel="nofollow" href="/secret-1">s</a>'
        hostile.add_page(host, "/", Page(html_page("home", links, body=follow_no)))
        hostile.add_html(host, "/a", ["/a?utm_campaign=again"])
        hostile.add_html(host, "/b")
        nofollow = '<meta name="robots" content="nofollow">'
        hostile.add_page(host, "/meta-nofollow", Page(html_page("mn", ["/secret-2"], nofollow)))
        noindex = '<meta name="robots" content="noindex">'
        hostile.add_page(host, "/noindex", Page(html_page("ni", ["/c"], head=noindex)))
        hostile.add_html(host, "/c")
        canonical = f'<link rel="canonical" href="{u("/a")}">'
        hostile.add_page(host, "/print", Page(html_page("print", ["/secret-3"], head=canonical)))
        index = sitemap_index([u("/sm/pages.xml.gz")])
        hostile.add_page(host, "/sm/index.xml", Page(index, content_type="application/xml"))
        listed = sitemap_xml([u("/from-sitemap-1"), u("/from-sitemap-2?utm_campaign=z")])
        gz = Page(gzip.compress(listed), content_type="application/x-gzip")
        hostile.add_page(host, "/sm/pages.xml.gz", gz)
        for path in ("/from-sitemap-1", "/from-sitemap-2"):
            hostile.add_html(host, path)
        job = {"sitemaps": True, "fields": {"title": [{"xpath": "//title/text()"}]}}
        fetch = {"traps": {"max_path_depth": 4}}
        records = crawl(cluster, [u("/")], job=job, fetch=fetch)
        paths = [e.path for e in web.entries()]
    assert paths.count("/a") == 1 and not [p for p in paths if "utm_" in p or "fbclid" in p]
    assert "/b" in paths and not [p for p in paths if "jsessionid" in p]
    assert not [p for p in paths if p.startswith("/secret")]  # rel=nofollow, meta, canonical
    assert {"/from-sitemap-1", "/from-sitemap-2", "/sm/index.xml", "/sm/pages.xml.gz"} <= set(paths)
    assert "/c" in paths  # noindex is not nofollow
    traps = [p for p in paths if p.startswith("/trap")]
    assert traps and all(p.count("/") <= 4 for p in traps)
    assert len(traps) < 20
    assert records[u("/a")].data == {"title": f"{host}/a"}
    assert records[u("/print")].data == {}  # defers to its canonical URL
    assert records[u("/noindex")].data == {} and records[u("/noindex")].body is None
    assert records[u("/c")].status == 200
