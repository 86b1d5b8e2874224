"""The revisit policies a job declares, as frozen values (built by parse.py).

A job's `revisit:` mapping names one schedule for all its URLs, or rules that
pick a schedule by URL, plus an optional `expire`:

    revisit: {every: 6h, jitter: 0.1}              # fixed interval, +-10 %
    revisit: {adaptive: {min: 5m, max: 14d}}       # follows each page's change rate
    revisit: {cron: "*/10 8-20 * * 1-5", timezone: Asia/Shanghai}
    revisit:
      rules:                                       # first match wins (re.search on the URL)
        - {match: '/category/', every: 10m}
        - {match: '/item/', adaptive: {min: 1h, max: 7d}}
        - {match: '/cart/', never: true}           # matched, never revisited
      default: {every: 1d}                         # the rest; without it, not revisited
      expire: 30d

`expire` works with or without a schedule: a URL found again by link
discovery at least this long after its last fetch is due again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from nadird.revisit.cron import zone


@dataclass(frozen=True)
class Fixed:
    """Every `every` seconds, spread by up to +-`jitter` of it (0.1 = +-10 %)."""

    every: float
    jitter: float = 0.0


@dataclass(frozen=True)
class Adaptive:
    """An interval from the page's estimated change rate, within [min, max].

    `initial` is the interval after the first fetch, before anything is
    known; by default the geometric mean of min and max (5m..14d: 5h18m),
    the neutral guess when the rate may be anywhere in between.
    """

    min: float
    max: float
    initial: float | None = None

    @property
    def first_interval(self) -> float:
        if self.initial is not None:
            return self.initial
        return math.sqrt(self.min * self.max)


@dataclass(frozen=True)
class Cron:
    """At the slots of a cron expression, read in an IANA time zone."""

    expr: str
    timezone: str = "UTC"

    @property
    def zone(self) -> ZoneInfo:
        return zone(self.timezone)  # ZoneInfo caches instances: cheap per call


Schedule = Fixed | Adaptive | Cron


@dataclass(frozen=True)
class Rule:
    """URLs where `pattern` matches (re.search) get `schedule`; None = never revisited."""

    pattern: re.Pattern[str]
    schedule: Schedule | None


@dataclass(frozen=True)
class RevisitPolicy:
    rules: tuple[Rule, ...] = ()
    default: Schedule | None = None
    expire: float | None = None

    def schedule_for(self, url: str) -> Schedule | None:
        """The schedule of the first rule matching `url`, else the default."""
        for rule in self.rules:
            if rule.pattern.search(url):
                return rule.schedule
        return self.default

    def expired(self, last_fetch: float, now: float) -> bool:
        """Whether a URL fetched at `last_fetch` and found again at `now` is due again."""
        return self.expire is not None and now - last_fetch >= self.expire


def _form(schedule: Schedule | None) -> list[object] | None:
    return None if schedule is None else [type(schedule).__name__, *dataclasses.astuple(schedule)]


def fingerprint(policy: RevisitPolicy | None) -> str:
    """A short digest of what sets a policy's due times ("" for no policy).

    Equal schedules and rules give equal digests in every process, so the
    master can tell at start that a job's rows were scheduled under another
    policy. `expire` is left out: it sets no due time (link discovery does).
    """
    if policy is None:
        return ""
    rules = [[r.pattern.pattern, r.pattern.flags, _form(r.schedule)] for r in policy.rules]
    text = json.dumps([rules, _form(policy.default)])
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
