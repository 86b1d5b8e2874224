"""The living web: change times, rates and prices, validators and noise, served
on loopback in this process."""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Iterator

import aiohttp
import lxml.html
import pytest
from multidict import CIMultiDict
from support.living_web_helpers import client, fetch

from nadird.revisit.allocate import freshness
from nadird.testing import judge
from nadird.testing.judge import Report
from nadird.testing.living import LivingWeb, ManualClock
from nadird.testing.livingpages import LivingPage
from nadird.testing.web import SyntheticWeb, run_in_thread

DAY = 86400.0


GOOD_VALIDATORS = ("both", "etag", "last-modified")


@pytest.fixture
def server() -> Iterator[SyntheticWeb]:
    with run_in_thread() as web:
        yield web


def conditional_headers(headers: CIMultiDict[str]) -> dict[str, str]:
    """What a revisiting client sends back: the validators it was given."""
    sent = {}
    if "ETag" in headers:
        sent["If-None-Match"] = headers["ETag"]
    if "Last-Modified" in headers:
        sent["If-Modified-Since"] = headers["Last-Modified"]
    return sent


def test_same_seed_same_change_times_whatever_the_order_asked() -> None:
    first = LivingWeb(pages=80, seed=7, clock=ManualClock())
    second = LivingWeb(pages=80, seed=7, clock=ManualClock())
    for t in (30.0, 5000.0, 100.0, DAY):  # asked in another order, in pieces
        for page in second.pages:
            page.schedule.version_at(t)
    assert first.truth(DAY) == second.truth(DAY)
    assert [p.price(3) for p in first.pages] == [p.price(3) for p in second.pages]
    other = LivingWeb(pages=80, seed=8, clock=ManualClock())
    assert other.truth(DAY) != first.truth(DAY)
    changes = first.truth(DAY)
    assert all(times == sorted(set(times)) for times in changes.values())
    assert all(t == math.floor(t) for times in changes.values() for t in times)


def test_changes_follow_the_rates_over_a_long_window() -> None:
    living = LivingWeb(pages=300, seed=11, clock=ManualClock())
    tiers = sorted({p.rate for p in living.pages})
    assert tiers[0] == 0.0 and tiers[-1] == 1 / 60 and len(tiers) == 6
    for rate in tiers:
        pages = [p for p in living.pages if p.rate == rate]
        if rate == 0:
            assert all(not p.schedule.changes_until(365 * DAY) for p in pages)
            continue
        # About 4000 changes per tier: the count is within 7 % (4.4 sd) of λT.
        window = 4000 / (len(pages) * rate)
        changes = sum(len(p.schedule.changes_until(window)) for p in pages)
        assert changes == pytest.approx(len(pages) * rate * window, rel=0.07)
    # Poisson, not merely the right mean: a share 1 − e^{−λw} of windows of
    # length w holds a change (here λw = 1, over 4000 windows per tier).
    ten_minutes = [p for p in living.pages if p.rate == 1 / 600]
    windows = hits = 0
    for page in ten_minutes:
        starts = {math.floor(t / 600) for t in page.schedule.changes_until(80 * 600)}
        windows += 80
        hits += len(starts)
    assert windows >= 3000
    assert hits / windows == pytest.approx(1 - math.exp(-1), abs=0.03)


def test_prices_move_at_every_change_and_both_values_are_known() -> None:
    living = LivingWeb(pages=100, seed=2, clock=ManualClock())
    products = [p for p in living.pages if p.kind == "product" and p.rate > 0]
    assert len(products) >= 20
    for page in products:
        prices = [page.price(v) for v in range(30)]
        assert all(isinstance(p, int) and p >= 100 for p in prices)
        assert all(old != new for old, new in itertools.pairwise(prices))
    assert all(p.price(0) is None for p in living.pages if p.kind != "product")


async def test_304_only_when_the_validator_matches_the_live_version(
    server: SyntheticWeb,
) -> None:
    clock = ManualClock()
    living = LivingWeb(pages=60, seed=5, clock=clock, rates=(1 / 60,)).install(server)
    kinds = {p.validators for p in living.pages}
    assert kinds == {"both", "etag", "last-modified", "none", "rotating-etag", "ignored-etag"}
    async with client() as session:
        given = {}
        for page in living.pages:
            _, headers, _ = await fetch(session, living.url(page))
            given[page.index] = (page.schedule.version_at(0), conditional_headers(headers))
        # Still the same version: only correct validators earn a 304, with no body.
        clock.set(0.5)
        for page in living.pages:
            status, _, body = await fetch(session, living.url(page), given[page.index][1])
            good = page.validators in GOOD_VALIDATORS
            assert (status, len(body) == 0) == ((304, True) if good else (200, False)), page
        # Each page at the instant of its first change: the old validators are stale.
        for page in sorted(living.pages, key=lambda p: p.schedule.became_live(1)):
            clock.set(page.schedule.became_live(1))
            status, headers, _ = await fetch(session, living.url(page), given[page.index][1])
            assert status == 200, page
            if page.validators in GOOD_VALIDATORS:
                again, _, _ = await fetch(session, living.url(page), conditional_headers(headers))
                assert again == 304, page
    for entry in living.entries():
        assert entry.status in (200, 304)
        assert entry.version == living.pages[entry.page].schedule.version_at(entry.t)
    assert sum(e.status == 304 for e in living.entries()) == 2 * sum(
        p.validators in GOOD_VALIDATORS for p in living.pages
    )


async def test_if_none_match_decides_over_a_matching_date(server: SyntheticWeb) -> None:
    clock = ManualClock()
    living = LivingWeb(pages=30, seed=5, clock=clock, rates=(1 / 60,)).install(server)
    page = next(p for p in living.pages if p.validators == "both")
    async with client() as session:
        _, old, _ = await fetch(session, living.url(page))
        clock.set(page.schedule.became_live(1))
        _, new, _ = await fetch(session, living.url(page))
        mixed = {"If-None-Match": old["ETag"], "If-Modified-Since": new["Last-Modified"]}
        assert (await fetch(session, living.url(page), mixed))[0] == 200
        assert (await fetch(session, living.url(page), {"If-None-Match": "*"}))[0] == 304
        assert (await fetch(session, living.url(page), {"If-Modified-Since": "soon"}))[0] == 200


async def test_broken_validators_are_told_apart(server: SyntheticWeb) -> None:
    living = LivingWeb(pages=60, seed=5, clock=ManualClock(), rates=(0.0,)).install(server)
    rotating = next(p for p in living.pages if p.validators == "rotating-etag")
    ignored = next(p for p in living.pages if p.validators == "ignored-etag")
    async with client() as session:
        tags = [(await fetch(session, living.url(rotating)))[1]["ETag"] for _ in range(3)]
        assert len(set(tags)) == 3  # a new ETag each time, on a page that never changes
        _, headers, body = await fetch(session, living.url(ignored))
        status, again, same = await fetch(
            session, living.url(ignored), conditional_headers(headers)
        )
        assert (status, again["ETag"], same) == (200, headers["ETag"], body)
        assert "Last-Modified" not in headers


def without_noise(body: bytes) -> bytes:
    tree = lxml.html.fromstring(body)
    noise = "//meta[@name='csrf-token'] | //aside[@class='ad'] | //footer"
    for element in tree.xpath(noise + " | //a[starts-with(@href, '/cart')]"):
        element.drop_tree()
    return lxml.html.tostring(tree)


async def test_noise_changes_the_bytes_not_the_version(server: SyntheticWeb) -> None:
    living = LivingWeb(pages=80, seed=3, clock=ManualClock(60.0)).install(server)
    noisy = [p for p in living.pages if p.noise]
    quiet = [p for p in living.pages if not p.noise]
    assert len(noisy) >= 10 and len(quiet) >= 10
    async with client() as session:
        for page in noisy + quiet:
            first = await fetch(session, living.url(page))
            second = await fetch(session, living.url(page))
            assert (first[0], second[0]) == (200, 200)
            if page.validators != "rotating-etag":
                assert first[1].get("ETag") == second[1].get("ETag")
            if page.noise:
                assert first[2] != second[2], page
                assert without_noise(first[2]) == without_noise(second[2]), page
            else:
                assert first[2] == second[2], page
    served = living.entries()
    versions: dict[int, set[int]] = {}
    for entry in served:
        versions.setdefault(entry.page, set()).add(entry.version)
    assert all(len(seen) == 1 for seen in versions.values())
    assert (
        judge.staleness(living.truth(61.0), judge.fetches_from_log(served), 60.0, 61.0).freshness
        == 1.0
    )


async def crawl_at(
    session: aiohttp.ClientSession,
    living: LivingWeb,
    clock: ManualClock,
    t: float,
    pages: list[LivingPage],
    validators: dict[int, dict[str, str]],
) -> list[tuple[int, int]]:
    """Fetch pages at virtual time t, conditionally when validators are known."""
    clock.set(t)
    answers = await asyncio.gather(
        *(fetch(session, living.url(p), validators.get(p.index)) for p in pages)
    )
    for page, (status, headers, _) in zip(pages, answers, strict=True):
        if status == 200:
            validators[page.index] = conditional_headers(headers)
    return [(status, len(body)) for status, _, body in answers]


async def test_fetching_after_every_change_is_always_fresh(server: SyntheticWeb) -> None:
    clock = ManualClock()
    living = LivingWeb(pages=40, seed=9, clock=clock).install(server)
    end = 1800.0
    truth = living.truth(end)
    changes = sorted((t, p) for p, times in truth.items() for t in times if t < end)
    assert len(changes) > 100
    validators: dict[int, dict[str, str]] = {}
    reports = []
    async with client() as session:
        await crawl_at(session, living, clock, 0.0, living.pages, validators)
        for t, index in changes:
            await crawl_at(session, living, clock, t, [living.pages[index]], validators)
            reports.append(Report(index, t))
    verdict = judge.judge(truth, living.entries(), 0.0, end, reports)
    assert verdict.staleness == judge.Staleness(freshness=1.0, mean_age=0.0)
    assert verdict.changes == judge.ChangeAccount(
        changes=len(changes), detected=len(changes), missed=0, missed_unfetched=0,
        reports=len(changes), false=0,
    )  # fmt: skip
    assert verdict.spending.requests == len(changes) + len(living.pages)


async def test_a_fixed_interval_crawler_gets_the_closed_form(server: SyntheticWeb) -> None:
    """Every page fetched every I (phases spread over the period): the measured
    freshness per rate tier is (1 − e^{−λI})/(λI)."""
    clock = ManualClock()
    rates = (1 / 60, 1 / 600, 1 / 3600)
    living = LivingWeb(pages=240, seed=4, clock=clock, rates=rates).install(server)
    interval, periods, groups = 600.0, 12, 10
    validators: dict[int, dict[str, str]] = {}
    got = []
    async with client() as session:
        for k in range(periods + 1):
            for g in range(groups):
                pages = [p for p in living.pages if p.index % groups == g]
                t = k * interval + g * interval / groups
                got += await crawl_at(session, living, clock, t, pages, validators)
    start, end = interval, (periods + 1) * interval
    truth = living.truth(end)
    fetches = judge.fetches_from_log(living.entries())
    for rate in rates:
        tier = [p.index for p in living.pages if p.rate == rate]
        assert len(tier) >= 60
        measured = judge.staleness(truth, fetches, start, end, tier).freshness
        assert measured == pytest.approx(freshness(rate, interval), abs=0.04)
    # What the crawler spent, as the server counted it, is what it received.
    spent = judge.spending(living.entries(), 0.0, math.inf)
    assert spent.requests == len(got)
    assert spent.not_modified == sum(status == 304 for status, _ in got) > 0
    assert spent.bytes == sum(size for _, size in got)
    # The optimum for the same budget beats spending it evenly.
    budget = len(living.pages) / interval
    uniform = judge.uniform_freshness(living.rates(), budget)
    best = judge.optimal_freshness(living.rates(), budget)
    assert best.freshness > uniform.freshness + 0.01


async def test_the_judge_tells_the_detectors_apart(server: SyntheticWeb) -> None:
    """Three change detectors on one crawl: bytes changed, ETag changed, content
    (noise removed) changed. Only the last one makes no false reports."""
    clock = ManualClock()
    living = LivingWeb(pages=80, seed=6, clock=clock, rates=(1 / 600, 0.0)).install(server)
    interval, rounds = 300.0, 10
    last: dict[int, tuple[bytes, str | None, bytes]] = {}
    reports: dict[str, list[Report]] = {"bytes": [], "etag": [], "content": []}
    async with client() as session:
        for k in range(rounds):
            clock.set(k * interval)
            for page in living.pages:
                _, headers, body = await fetch(session, living.url(page))
                seen = (body, headers.get("ETag"), without_noise(body))  # as in reports
                before = last.get(page.index)
                last[page.index] = seen
                if before is None:
                    continue
                for name, old, new in zip(reports, before, seen, strict=True):
                    if old != new:
                        reports[name].append(Report(page.index, clock.now()))
    end = rounds * interval
    truth, entries = living.truth(end), living.entries()
    verdicts = {name: judge.judge(truth, entries, 0.0, end, made) for name, made in reports.items()}
    content = verdicts["content"].changes
    assert content.false == 0 and content.detected > 50
    # Each fetch sees at most one change: the others between two fetches are missed.
    assert content.missed == content.missed_unfetched > 20
    assert content.changes >= content.detected + content.missed
    # Bytes: every change found, and a false one at each refetch of a noisy page.
    noisy = {p.index for p in living.pages if p.noise}
    refetches = sum(e.page in noisy for e in entries) - len(noisy)
    found = sum(r.page in noisy for r in reports["content"])
    assert verdicts["bytes"].changes.detected == content.detected
    assert verdicts["bytes"].changes.false == refetches - found > 50
    # ETags: rotating ones cry wolf at every refetch; pages without one report nothing.
    etag = verdicts["etag"].changes
    rotating = {p.index for p in living.pages if p.validators == "rotating-etag"}
    found = sum(r.page in rotating for r in reports["content"])
    assert etag.false == len(rotating) * (rounds - 1) - found > 0
    assert etag.detected < content.detected
