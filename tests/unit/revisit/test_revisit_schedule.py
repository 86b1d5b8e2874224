"""Next-due times on a fake clock: fixed, adaptive, cron (incl. DST), expire."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from nadird.revisit.estimate import ChangeStats
from nadird.revisit.parse import parse_revisit
from nadird.revisit.policy import Adaptive, Cron, Fixed
from nadird.revisit.schedule import (
    MAX_GROWTH,
    UrlState,
    adaptive_interval,
    due_for,
    due_when_found,
    jitter_unit,
    next_due,
    record_fetch,
)

HOUR = 3600.0
URL = "https://shop.test/item/1"
SHANGHAI = ZoneInfo("Asia/Shanghai")
NEW_YORK = ZoneInfo("America/New_York")


def at(tz: ZoneInfo, *parts: int, fold: int = 0) -> float:
    return datetime(*parts, tzinfo=tz, fold=fold).timestamp()


def local(tz: ZoneInfo, epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz).replace(tzinfo=None)


def test_fixed_interval_with_deterministic_jitter() -> None:
    schedule = Fixed(every=6 * HOUR, jitter=0.1)
    state = UrlState(last_fetch=1_000_000.0)
    due = next_due(schedule, URL, state)
    assert due is not None and 1_000_000 + 5.4 * HOUR <= due <= 1_000_000 + 6.6 * HOUR
    assert next_due(schedule, URL, state) == due  # same answer after a restart
    assert next_due(Fixed(every=6 * HOUR), URL, state) == 1_000_000 + 6 * HOUR
    spread = [jitter_unit(f"https://shop.test/item/{i}", 0.0) for i in range(2000)]
    assert -1 <= min(spread) < -0.9 and 0.9 < max(spread) < 1
    assert abs(sum(spread) / len(spread)) < 0.05
    assert jitter_unit(URL, 0.0, seed=b"a") != jitter_unit(URL, 0.0, seed=b"b")


def test_fixed_schedule_after_downtime_runs_once() -> None:
    schedule = Fixed(every=HOUR)
    state = UrlState(last_fetch=0.0)
    now = 10 * HOUR  # down for ten intervals
    due = next_due(schedule, URL, state)
    assert due is not None and due <= now
    state = record_fetch(state, now, changed=True)
    due = next_due(schedule, URL, state)
    assert due == now + HOUR


def test_record_fetch_feeds_the_estimator() -> None:
    state = record_fetch(None, 100.0, changed=False)
    assert state == UrlState(last_fetch=100.0)
    state = record_fetch(state, 100.0 + HOUR, changed=True, last_modified=100.0 + HOUR - 60)
    assert state.last_interval == HOUR
    assert state.stats.dated_changes == 1.0 and state.stats.clear_time == 60.0
    back = record_fetch(state, 50.0, changed=True)  # the clock went back
    assert back.stats == state.stats and back.last_interval == 0.0


def test_adaptive_interval_from_estimate_allocation_and_bounds() -> None:
    policy = Adaptive(min=300, max=14 * 86400)
    first = UrlState(last_fetch=0.0)
    assert adaptive_interval(policy, first) == pytest.approx(policy.first_interval)
    # Changing about once an hour: aims at λI = 0.2, i.e. 12 minutes.
    stats = ChangeStats()
    for k in range(200):
        stats = stats.observe(600.0, changed=k % 6 == 0, memory=None)
    busy = UrlState(last_fetch=0.0, last_interval=600.0, stats=stats)
    rate = stats.rate()
    assert rate is not None
    assert adaptive_interval(policy, busy) == pytest.approx(min(0.2 / rate, MAX_GROWTH * 600))
    # Never seen changing: grows, but at most doubles per check, up to max.
    quiet = UrlState(last_fetch=0.0, last_interval=HOUR, stats=ChangeStats().observe(HOUR, False))
    assert adaptive_interval(policy, quiet) == 2 * HOUR
    long_quiet = quiet._replace(last_interval=13 * 86400)
    assert adaptive_interval(policy, long_quiet) == policy.max
    # The allocation's interval wins, clamped to the bounds.
    assert adaptive_interval(policy, busy, allocated=1000.0) == 1000.0
    assert adaptive_interval(policy, busy, allocated=10.0) == 300.0
    assert next_due(policy, URL, busy, allocated=1000.0) == 1000.0


def test_cron_in_shanghai_weekday_daytime_slots() -> None:
    schedule = Cron(expr="*/10 8-20 * * 1-5", timezone="Asia/Shanghai")
    friday_evening = at(SHANGHAI, 2026, 12, 4, 20, 55)  # a Friday
    due = next_due(schedule, URL, UrlState(last_fetch=friday_evening))
    assert due is not None
    assert local(SHANGHAI, due) == datetime(2026, 12, 7, 8, 0)  # Monday 08:00 Shanghai
    assert due == at(SHANGHAI, 2026, 12, 7, 8, 0)
    midday = at(SHANGHAI, 2026, 12, 1, 12, 0)  # exactly on a slot: the next one
    assert next_due(schedule, URL, UrlState(last_fetch=midday)) == midday + 600


def test_cron_missed_slots_run_once() -> None:
    schedule = Cron(expr="*/10 * * * *")
    state = UrlState(last_fetch=at(SHANGHAI, 2026, 12, 1, 9, 0))
    restart = at(SHANGHAI, 2026, 12, 1, 14, 3)  # thirty slots missed
    runs = 0
    now = restart
    while now < restart + 25 * 60:  # the master's loop, on a fake clock, minute by minute
        due = next_due(schedule, URL, state)
        assert due is not None
        if due <= now:
            runs += 1
            state = record_fetch(state, now, changed=False)
        now += 60
    # Once for the missed slots, then at 14:10 and 14:20 only.
    assert runs == 3


def test_cron_across_dst_in_new_york() -> None:
    daily = Cron(expr="30 2 * * *", timezone="America/New_York")
    # 2026-03-08: 02:00 jumps to 03:00, so 02:30 does not exist; runs once, at 03:00.
    before = at(NEW_YORK, 2026, 3, 7, 12, 0)
    due = next_due(daily, URL, UrlState(last_fetch=before))
    assert due is not None and local(NEW_YORK, due) == datetime(2026, 3, 8, 3, 0)
    after = next_due(daily, URL, UrlState(last_fetch=due))
    assert after is not None and local(NEW_YORK, after) == datetime(2026, 3, 9, 2, 30)
    # 2026-11-01: 01:00-02:00 happens twice; a 01:30 job runs once that day.
    nightly = Cron(expr="30 1 * * *", timezone="America/New_York")
    first = next_due(nightly, URL, UrlState(last_fetch=at(NEW_YORK, 2026, 10, 31, 12, 0)))
    assert first == at(NEW_YORK, 2026, 11, 1, 1, 30, fold=0)
    # Even fetched during the repeated hour (01:10 the second time), not again that day.
    repeated = at(NEW_YORK, 2026, 11, 1, 1, 10, fold=1)
    assert repeated > first
    again = next_due(nightly, URL, UrlState(last_fetch=repeated))
    assert again is not None and local(NEW_YORK, again) == datetime(2026, 11, 2, 1, 30)
    # Every 15 minutes keeps real 15-minute steps through the repeated hour.
    quarter = Cron(expr="*/15 * * * *", timezone="America/New_York")
    t = at(NEW_YORK, 2026, 11, 1, 0, 50)
    steps = []
    for _ in range(12):
        nxt = next_due(quarter, URL, UrlState(last_fetch=t))
        assert nxt is not None
        steps.append(nxt - t)
        t = nxt
    assert steps[0] == 600 and all(s == 900 for s in steps[1:])


def test_policy_routes_urls_and_expire_on_rediscovery() -> None:
    policy = parse_revisit(
        {
            "rules": [{"match": "/category/", "every": "10m"}, {"match": "/cart/", "never": True}],
            "expire": "30d",
        }
    )
    state = UrlState(last_fetch=0.0)
    assert due_for(policy, "https://s.test/category/a", state) == 600.0
    assert due_for(policy, "https://s.test/cart/1", state) is None
    assert due_for(policy, "https://s.test/page", state) is None
    assert due_when_found(policy, None, now=5.0)  # never fetched: new
    assert not due_when_found(policy, state, now=29 * 86400.0)
    assert due_when_found(policy, state, now=30 * 86400.0)
    no_expire = parse_revisit({"every": "1h"})
    assert not due_when_found(no_expire, state, now=1e9)
