"""The per-domain pace: effective delay, adaptive delay, 429/503 holds."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from nadird.config import ThrottleConfig
from nadird.worker.fetch.throttle import DomainPace, DomainPaces, Pacer, parse_retry_after


def test_effective_delay_is_the_largest_of_minimum_crawl_delay_and_adaptive() -> None:
    cfg = ThrottleConfig(max_delay=5.0)
    state = DomainPace(adaptive=0.0)
    pacer = Pacer(0.2, state, cfg)
    assert pacer.delay() == 0.2
    state.crawl_delay = 0.5
    assert pacer.delay() == 0.5
    state.adaptive = 9.0  # capped by max_delay
    assert pacer.delay() == 5.0
    assert Pacer(0.2, state, ThrottleConfig(adaptive=False)).delay() == 0.5


def test_adaptive_delay_moves_towards_latency_over_target_and_doubles_on_strain() -> None:
    cfg = ThrottleConfig(target_concurrency=2.0, max_delay=3.0)
    state = DomainPace(adaptive=0.0)
    pacer = Pacer(0.0, state, cfg)
    for _ in range(30):
        pacer.observe(0.8, failed=False)
    assert state.adaptive == pytest.approx(0.4, rel=1e-3)
    pacer.observe(0.0, failed=True)
    assert state.adaptive == pytest.approx(0.8, rel=1e-3)
    for _ in range(10):
        pacer.observe(0.0, failed=True)
    assert state.adaptive == 3.0


async def test_turns_are_spaced_by_the_delay_known_at_the_time() -> None:
    state = DomainPace(adaptive=0.0)
    pacer = Pacer(0.05, state, ThrottleConfig(adaptive=False))
    starts = []
    for i in range(4):
        if i == 2:
            state.crawl_delay = 0.12  # learnt from robots.txt mid-bag: applies at once
        await pacer.turn()
        starts.append(time.monotonic())
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps[0] >= 0.05 - 0.005
    assert gaps[1] >= 0.12 - 0.005 and gaps[2] >= 0.12 - 0.005
    assert 0.0 < pacer.rest() <= 0.12


async def test_jitter_only_adds() -> None:
    pacer = Pacer(0.02, DomainPace(adaptive=0.0), ThrottleConfig(adaptive=False, jitter=1.0))
    last = None
    for _ in range(5):
        await pacer.turn()
        now = time.monotonic()
        if last is not None:
            assert now - last >= 0.02 - 0.003
        last = now


def test_throttled_holds_retry_after_capped_or_backs_off_exponentially() -> None:
    cfg = ThrottleConfig(backoff_base=0.5, max_retry_after=10.0)
    state = DomainPace(adaptive=0.0)
    pacer = Pacer(0.0, state, cfg)
    started = time.monotonic()
    assert pacer.throttled(2.0) == 2.0
    rest = pacer.rest()
    # Less only by the time gone since (a busy machine may stall the test).
    assert 2.0 - (time.monotonic() - started) <= rest <= 2.0
    assert pacer.throttled(3600.0) == 10.0
    assert [pacer.throttled(None) for _ in range(3)] == [2.0, 4.0, 8.0]  # 2 before: 0.5 * 2**2
    pacer.served()
    assert pacer.throttled(None) == 0.5
    # A new bag of the domain on this worker still waits.
    assert Pacer(0.0, state, cfg).rest() > 9.0


def test_retry_after_seconds_and_http_dates() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(" 0 ") == 0.0
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now + 30))
    assert parse_retry_after(date, now=now) == pytest.approx(30.0)
    past = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now - 30))
    assert parse_retry_after(past, now=now) == 0.0
    for bad in (None, "", "soon", "-5", "1.5e3"):
        assert parse_retry_after(bad) is None


def test_domain_states_are_bounded() -> None:
    states = DomainPaces(ThrottleConfig(max_domains=2, start_delay=0.25))
    a = states.get("a.test")
    assert a.adaptive == 0.25
    states.get("b.test")
    assert states.get("a.test") is a  # recently used
    states.get("c.test")  # evicts b
    assert states.get("a.test") is a


def test_concurrent_lanes_share_one_schedule() -> None:
    async def run() -> list[float]:
        pacer = Pacer(0.03, DomainPace(adaptive=0.0), ThrottleConfig(adaptive=False))
        starts: list[float] = []

        async def lane() -> None:
            for _ in range(3):
                await pacer.turn()
                starts.append(time.monotonic())

        await asyncio.gather(lane(), lane())
        return sorted(starts)

    starts = asyncio.run(run())
    assert min(b - a for a, b in itertools.pairwise(starts)) >= 0.03 - 0.005
