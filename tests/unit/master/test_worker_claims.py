"""What the master does not take from a worker as sent (MasterCore, no
sockets): link fingerprints and spellings, links outside the job's rules,
item keys, a page's depth, a bag's wait, robots notes for other domains."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.core_helpers import T0, bags, make_core, page, register, results

from nadird.common.urls import fingerprint
from nadird.items.keys import UrlKey
from nadird.job.request import RequestSpec, link_fields
from nadird.job.spec import Job, LinkRules, Selector
from nadird.master.core import MasterCore
from nadird.master.leasing.robots_notes import of_domain
from nadird.protocol.messages import Bag, BagDone, PageResult, RobotsNote


@pytest.fixture
def core(tmp_path: Path) -> Iterator[MasterCore]:
    yield from make_core(tmp_path)


def with_links(url: str, links: list[str], fps: list[bytes], **fields: object) -> PageResult:
    return page(url, links=links, link_fps=fps, **fields)


def send(core: MasterCore, bag: Bag, session: bytes, pages: list[PageResult]) -> int:
    """Apply the results; how many URLs were admitted."""
    before = core.admission.admitted["default"]
    core.on_results(results(bag, "w1", session, pages), T0)
    return core.admission.admitted["default"] - before


def queued(core: MasterCore, url: str, domain: str = "a.test") -> bool:
    db = core.frontier.db
    return bool(db.find(db.domain_id(domain), [fingerprint(url)]))


def test_a_forged_fingerprint_marks_no_other_url_seen(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    victim, carrier = "http://a.test/victim", "http://a.test/carrier"
    forged = with_links(bag.urls[0], [carrier], [fingerprint(victim)])
    assert send(core, bag, session, [forged]) == 1
    # The carrier went in under its own fingerprint; the victim is still new.
    assert fingerprint(carrier) in core.seen and fingerprint(victim) not in core.seen
    assert core.admission.check.rejected == {"fingerprint": 1}
    honest = with_links(bag.urls[1], [victim], [fingerprint(victim)])
    assert send(core, bag, session, [honest]) == 1
    assert queued(core, victim) and queued(core, carrier)


def test_one_url_under_two_fingerprints_is_admitted_once(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    url = "http://a.test/twice"
    pages = [
        with_links(bag.urls[0], [url], [fingerprint(url)]),
        with_links(bag.urls[1], [url], [bytes(16)]),
        with_links(bag.urls[2], [url], [b"\x01" * 16]),
    ]
    assert send(core, bag, session, pages) == 1
    assert core.admission.check.rejected == {"fingerprint": 2}


def test_a_spelling_another_version_would_make_is_canonicalized(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    spelled = "HTTP://A.test:80/x?b=2&a=1#top"
    canonical = "http://a.test/x?a=1&b=2"
    assert send(core, bag, session, [with_links(bag.urls[0], [spelled], [fingerprint(spelled)])])
    assert queued(core, canonical) and not queued(core, spelled)
    assert fingerprint(canonical) in core.seen and fingerprint(spelled) not in core.seen
    assert core.admission.check.rejected == {"canonical": 1}


def test_no_url_and_out_of_scope_links_are_dropped(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    links = ["ftp://a.test/file", "http://elsewhere.test/", "http://a.test/kept"]
    fps = [fingerprint(u) for u in links]
    assert send(core, bag, session, [with_links(bag.urls[0], links, fps)]) == 1
    assert core.admission.check.rejected == {"invalid_url": 1, "scope": 1}
    assert fingerprint("http://elsewhere.test/") not in core.seen


def test_scope_is_judged_from_the_pages_final_url(tmp_path: Path) -> None:
    rules = LinkRules(scope="allowed-domains", allowed_domains=["a.test"], deny=["/private"])
    for core in make_core(tmp_path, {"default": Job(links=rules)}):
        session = register(core, "w1")
        bag = bags(core)["a.test"]
        links = ["http://a.test/ok", "http://a.test/private/1", "http://b.test/no"]
        fps = [fingerprint(u) for u in links]
        assert send(core, bag, session, [with_links(bag.urls[0], links, fps)]) == 1
        assert core.admission.check.rejected == {"scope": 2}


def test_a_request_link_is_fingerprinted_as_its_request(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    spec = RequestSpec("http://a.test/search", "POST", body=b"q=1", content_type="form")
    fields = link_fields([], [spec])
    forged = page(bag.urls[0], **{**fields, "link_fps": [fingerprint(spec.url)]})
    assert send(core, bag, session, [forged]) == 1
    assert spec.fingerprint() in core.seen and fingerprint(spec.url) not in core.seen
    assert core.admission.check.rejected == {"fingerprint": 1}


def test_a_known_claimed_fingerprint_is_not_checked(core: MasterCore) -> None:
    """Links the seen set knows under their claimed fingerprint admit nothing:
    the check costs new links only."""
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    known = fingerprint(bag.urls[2])  # queued, hence seen
    assert send(core, bag, session, [with_links(bag.urls[0], ["http://a.test/n"], [known])]) == 0
    assert core.admission.check.rejected == {}


def keyed_core(tmp_path: Path, item_key: list[str] | UrlKey) -> Iterator[MasterCore]:
    job = Job(fields={"title": [Selector(css="h1")]}, item_key=item_key)
    return make_core(tmp_path, {"default": job})


def test_a_forged_item_key_is_replaced_and_the_item_marked_invalid(tmp_path: Path) -> None:
    for core in keyed_core(tmp_path, ["title"]):
        session = register(core, "w1")
        bag = bags(core)["a.test"]
        honest = page(bag.urls[0], title="kettle", item_key="kettle")
        forged = page(bag.urls[1], title="toaster", item_key="kettle")
        records = core.on_results(results(bag, "w1", session, [honest, forged]), T0)
        by_url = {r.url: r for r in records}
        assert by_url[bag.urls[0]].item_key == "kettle" and "_valid" not in honest.data
        record = by_url[bag.urls[1]]
        assert record.item_key == "toaster" and record.data["_valid"] is False
        assert "the worker sent key 'kettle'" in record.data["_errors"]["item_key"]
        assert core.stats["rejected_item_keys"] == 1
        assert core.invalid == {("default", "item_key"): 1}


def test_a_url_key_comes_from_the_leased_url(tmp_path: Path) -> None:
    for core in keyed_core(tmp_path, UrlKey(r"a\.test/(\d+)")):
        session = register(core, "w1")
        bag = bags(core)["a.test"]
        missing = page(bag.urls[0])  # an older worker that sent no key
        forged = page(bag.urls[1], item_key="999")
        records = core.on_results(results(bag, "w1", session, [missing, forged]), T0)
        keys = {r.url: r.item_key for r in records}
        assert keys == {bag.urls[0]: "0", bag.urls[1]: "1"}
        assert core.stats["rejected_item_keys"] == 2


def test_a_job_without_item_key_keeps_no_key_a_worker_sends(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    [record] = core.on_results(results(bag, "w1", session, [page(bag.urls[0], item_key="x")]), T0)
    assert record.item_key is None and record.data["_valid"] is False
    assert core.stats["rejected_item_keys"] == 1


def test_a_page_at_another_depth_than_leased_drops_the_message(tmp_path: Path) -> None:
    for core in make_core(tmp_path, {"default": Job(max_depth=1)}):
        session = register(core, "w1")
        bag = bags(core)["a.test"]
        assert bag.depths == [0, 0, 0]
        # Depth -1: its links would enter at 0 (seed rank) past any max_depth.
        deep = with_links(bag.urls[0], ["http://a.test/d"], [fingerprint("http://a.test/d")])
        deep.depth = -1
        assert core.on_results(results(bag, "w1", session, [deep]), T0) == []
        assert core.refused == {"depth": 1}
        deep.depth = 0
        assert len(core.on_results(results(bag, "w1", session, [deep]), T0)) == 1


@pytest.mark.parametrize("wait", [1e12, math.inf])
def test_a_bags_wait_is_capped(core: MasterCore, wait: float) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    core.on_results(results(bag, "w1", session, [page(u) for u in bag.urls[:2]]), T0)
    returned = [fingerprint(bag.urls[2])]
    done = BagDone(node="w1", lease=bag.lease, epoch=bag.epoch, returned=returned, wait=wait)
    core.on_control(b"w1", done, T0)
    throttle = core.config.fetch.throttle
    longest = max(throttle.max_retry_after, throttle.max_crawl_delay, throttle.max_delay)
    assert core.stats["waits_capped"] == 1
    # The domain is leased again once the longest wait a setting allows is over.
    assert "a.test" not in bags(core, T0 + longest - 1)
    assert "a.test" in bags(core, T0 + longest + 1)


def test_robots_notes_only_for_the_bags_domain() -> None:
    notes = [
        RobotsNote("http://www.a.test", False, "Disallow: /x", 5.0),
        RobotsNote("http://b.test", False, "Disallow: /", 0.0),
        RobotsNote("https://a.test:8443", True, "", -1e9),
    ]
    kept = of_domain(notes, "a.test")
    assert [n.origin for n in kept] == ["http://www.a.test", "https://a.test:8443"]
    assert [n.age for n in kept] == [5.0, 0.0]


def test_a_fetch_time_in_the_future_becomes_the_masters_clock(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    pages = [page(bag.urls[0], fetched_at=time.time() + 1e9), page(bag.urls[1])]
    pages.append(page(bag.urls[2], fetched_at=math.nan))
    before = time.time()
    records = {r.url: r for r in core.on_results(results(bag, "w1", session, pages), T0)}
    assert before <= records[bag.urls[0]].fetched_at <= time.time()
    assert before <= records[bag.urls[2]].fetched_at <= time.time()
    assert records[bag.urls[1]].fetched_at == T0  # an honest past time is kept
    assert core.stats["future_fetch_times"] == 2
