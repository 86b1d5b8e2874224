"""When a known URL is due again, from its policy and its stored state.

Everything here is a pure function of its arguments: times are wall-clock
epoch seconds (what is stored), and the caller passes "now" where it matters,
so tests run on a fake clock. A due time in the past means "due now", once:
the fetch then records its own time as `last_fetch`, and the next due time
is computed from that, so a master that was down (or a clock that jumped)
runs each URL once, not once per missed interval or cron slot.
"""

from __future__ import annotations

import hashlib
import math
from typing import NamedTuple

from nadird.revisit.cron import next_slot
from nadird.revisit.estimate import DEFAULT_MEMORY, ChangeStats
from nadird.revisit.policy import Adaptive, Cron, Fixed, RevisitPolicy, Schedule

# Without an allocation, an adaptive interval aims at λI = 0.2: about 91 %
# expected freshness for the page alone.
SOLO_CHANGES_PER_INTERVAL = 0.2
# An adaptive interval at most doubles per check: a few unchanged checks are
# weak evidence, and a 14-day jump after one of them would be hard to undo.
MAX_GROWTH = 2.0
# At most this share of an adaptive interval is taken back for a late fetch.
LATE_CREDIT = 0.5


class UrlState(NamedTuple):
    last_fetch: float  # epoch seconds of the last fetch
    last_interval: float = 0.0  # seconds between the last two fetches; 0 after the first
    stats: ChangeStats = ChangeStats()


def record_fetch(
    state: UrlState | None,
    fetched_at: float,
    changed: bool,
    last_modified: float | None = None,
    memory: float | None = DEFAULT_MEMORY,
) -> UrlState:
    """The state after a fetch at `fetched_at` that did (not) see a change.

    The first fetch (no state) only starts the clock. `last_modified` is the
    response's Last-Modified as epoch seconds, when it has one.
    """
    if state is None:
        return UrlState(last_fetch=fetched_at)
    elapsed = fetched_at - state.last_fetch
    age = None if last_modified is None else fetched_at - last_modified
    stats = state.stats.observe(elapsed, changed, modified_age=age, memory=memory)
    return UrlState(last_fetch=fetched_at, last_interval=max(elapsed, 0.0), stats=stats)


def jitter_unit(url: str, last_fetch: float, seed: bytes = b"") -> float:
    """A number in [-1, 1) fixed by the URL and its last fetch.

    Deterministic rather than random: recomputing a due time after a restart
    gives the same answer, and URLs fetched together still spread apart.
    """
    digest = hashlib.blake2b(f"{url}\0{last_fetch!r}".encode(), key=seed, digest_size=8)
    return int.from_bytes(digest.digest(), "big") / 2.0**63 - 1.0


def adaptive_interval(
    policy: Adaptive, state: UrlState, allocated: float | None = None, probe: float | None = None
) -> float:
    """The next interval: the allocation's if given, else one from the estimated rate.

    Clamped to [min, max], and to at most MAX_GROWTH times the last regular
    interval. `probe` is the domain's exploratory interval (plan.py): a page
    whose every check saw a change (`ChangeStats.censored`) gets one
    exploratory check after each regular one while it stays so, if the probe
    is short beside its usual interval (else its checks already are probes).
    """
    stats = state.stats
    after_probe = stats.is_short(state.last_interval)
    if probe is not None:
        probe = min(policy.max, max(policy.min, probe))
        if not after_probe and stats.is_short(probe) and stats.censored():
            return probe
    if allocated is not None:
        target = allocated
    elif state.last_interval <= 0:
        return policy.first_interval
    else:
        rate = stats.rate()
        target = math.inf if not rate else SOLO_CHANGES_PER_INTERVAL / rate
    if state.last_interval > 0:
        # After an exploratory check the interval to grow from is the usual one.
        base = stats.regular_interval() if after_probe else state.last_interval
        target = min(target, MAX_GROWTH * base)
    return min(policy.max, max(policy.min, target))


def is_probe(state: UrlState, due: float) -> bool:
    """Whether a due time `adaptive_interval` gave is an exploratory check.

    A probe only tells something if it runs on time: late, it is one more
    long check that saw a change, and the page asks for another. Callers
    take due probes before other due URLs of the domain (the master gives
    them a higher queue priority).
    """
    return state.stats.censored() and state.stats.is_short(due - state.last_fetch)


def next_due(
    schedule: Schedule,
    url: str,
    state: UrlState,
    allocated: float | None = None,
    seed: bytes = b"",
    probe: float | None = None,
    late: float = 0.0,
) -> float | None:
    """Epoch seconds when `url` is due under `schedule`; None if never again.

    `allocated` is the interval allocate.py gave this page, `probe` its
    domain's exploratory interval and `late` how late this fetch ran after
    its due time (adaptive only): the next interval is shortened by it, up to
    LATE_CREDIT of itself. A domain whose queue waits adds about the same
    delay to every interval, which stretches the short ones (the pages the
    allocation valued most) far more than the long ones; the credit keeps each
    page's mean interval near its allocation, and its bound keeps a master
    that was down from checking a page twice in a row.
    """
    if isinstance(schedule, Fixed):
        spread = schedule.jitter * jitter_unit(url, state.last_fetch, seed)
        return state.last_fetch + schedule.every * (1.0 + spread)
    if isinstance(schedule, Adaptive):
        interval = adaptive_interval(schedule, state, allocated, probe)
        return state.last_fetch + interval - min(max(late, 0.0), LATE_CREDIT * interval)
    if isinstance(schedule, Cron):
        return next_slot(schedule.expr, schedule.zone, state.last_fetch)
    raise TypeError(f"not a schedule: {schedule!r}")


def due_for(
    policy: RevisitPolicy,
    url: str,
    state: UrlState,
    allocated: float | None = None,
    seed: bytes = b"",
    probe: float | None = None,
    late: float = 0.0,
) -> float | None:
    """Due time of `url` under the schedule its job's policy gives it, if any."""
    schedule = policy.schedule_for(url)
    if schedule is None:
        return None
    return next_due(schedule, url, state, allocated, seed, probe, late)


def due_when_found(policy: RevisitPolicy, state: UrlState | None, now: float) -> bool:
    """Whether link discovery at `now` makes `url` due: new, or older than `expire`."""
    return state is None or policy.expired(state.last_fetch, now)
