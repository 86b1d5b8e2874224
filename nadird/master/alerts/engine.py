"""Turns what the rules find into alerts: new, repeated, resolved.

An alert is one rule firing for one subject. It is sent when it starts,
again at most once per the rule's `repeat` while it lasts, and a resolved
notice is sent when it stops (except for moments such as `job_finished`).
A `change` is a moment per page: the same URL is sent at most once per
`repeat`. Pure: a snapshot in, events out; the clock is the snapshot's. The
last RECENT_EVENTS events are kept (a bounded ring) for the web console.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from nadird.config.alerts import RuleConfig
from nadird.master.alerts.rules import (
    EVENTS_ONLY,
    MOMENTS,
    WATCHERS,
    Change,
    Firing,
    Snapshot,
    Watcher,
)

State = Literal["firing", "resolved"]
RECENT_EVENTS = 200


@dataclass(frozen=True)
class Event:
    rule: RuleConfig
    index: int  # the rule's place in alerts.rules
    subject: str  # "crawl", a domain, a worker
    state: State
    value: float | None  # None: the rule measures nothing (a change to any value)
    threshold: float | None  # None: the rule has no threshold
    since: float  # monotonic time the alert started
    at: float  # monotonic time of this event
    repeat: int = 0  # 0 for the first notice, then 1, 2...
    details: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class OpenAlert:
    """An alert firing now: its rule, subject, start and latest measure."""

    rule: RuleConfig
    index: int
    subject: str
    since: float  # monotonic
    value: float | None
    threshold: float | None
    sent: int  # notices sent so far


@dataclass
class _Active:
    since: float
    last_sent: float
    last: Firing
    sent: int = 1
    suppressed: int = 0


class AlertEngine:
    def __init__(self, rules: list[RuleConfig]) -> None:
        self.rules = rules
        self._watchers: list[Watcher] = [WATCHERS[r.type](r) for r in rules]
        self._active: dict[tuple[int, str], _Active] = {}
        # Per moment rule: subject -> when last sent, oldest first.
        self._recent: dict[int, dict[str, float]] = {}
        self.suppressed = 0  # repeats held back by `repeat`, all rules
        self.recent: deque[Event] = deque(maxlen=RECENT_EVENTS)  # newest last
        self._last: Snapshot | None = None  # the latest snapshot evaluated

    def active(self) -> list[tuple[int, str]]:
        return sorted(self._active)

    def reload(self, rules: list[RuleConfig]) -> int:
        """Take a new rule list. A rule equal to a running one keeps its
        watcher's history, its open alerts and its repeat clocks (nothing is
        sent again); the alerts of a rule that is gone end without a notice.
        Returns how many rules were kept."""
        old_rules, old_watchers = self.rules, self._watchers
        old_active, old_recent = self._active, self._recent
        self.rules, self._watchers, self._active, self._recent = rules, [], {}, {}
        unclaimed = list(range(len(old_rules)))
        kept = 0
        for index, rule in enumerate(rules):
            was = next((i for i in unclaimed if old_rules[i] == rule), None)
            if was is None:
                watcher = WATCHERS[rule.type](rule)
                if self._last is not None:
                    watcher.prime(self._last)
                self._watchers.append(watcher)
                continue
            unclaimed.remove(was)
            kept += 1
            self._watchers.append(old_watchers[was])
            for (i, subject), active in old_active.items():
                if i == was:
                    self._active[(index, subject)] = active
            if was in old_recent:
                self._recent[index] = old_recent[was]
        return kept

    def take_not_numeric(self) -> int:
        """Numeric change conditions met by values that are no numbers, since last asked."""
        count = 0
        for watcher in self._watchers:
            if isinstance(watcher, Change):
                count, watcher.not_numeric = count + watcher.not_numeric, 0
        return count

    def open_alerts(self) -> list[OpenAlert]:
        """Every alert firing now, the longest-lasting first."""
        alerts = [
            OpenAlert(self.rules[i], i, subject, a.since, a.last.value, a.last.threshold, a.sent)
            for (i, subject), a in self._active.items()
        ]
        return sorted(alerts, key=lambda alert: (alert.since, alert.index, alert.subject))

    def evaluate(self, snap: Snapshot) -> list[Event]:
        self._last = snap
        events: list[Event] = []
        for index, watcher in enumerate(self._watchers):
            scoped = snap.scoped(watcher.rule)
            firing = {} if scoped is None else watcher.check(scoped)
            if watcher.rule.type in MOMENTS:
                events.extend(self._moments(index, firing, snap.now))
                continue
            events.extend(self._fired(index, firing, snap.now))
            events.extend(self._cleared(index, firing, snap.now))
        self.recent.extend(events)
        return events

    def _moments(self, index: int, firing: dict[str, Firing], now: float) -> list[Event]:
        """Each subject once, then not again within `repeat` of its last notice."""
        repeat = self.rules[index].repeat_s
        recent = self._recent.setdefault(index, {})
        while recent:  # oldest first: forget what `repeat` no longer holds back
            subject, sent = next(iter(recent.items()))
            if now - sent < repeat:
                break
            del recent[subject]
        out = []
        for subject, found in firing.items():
            if subject in recent:
                self.suppressed += 1
                continue
            recent[subject] = now
            out.append(self._event(index, subject, "firing", found, now, now, 0))
        return out

    def _fired(self, index: int, firing: dict[str, Firing], now: float) -> list[Event]:
        rule = self.rules[index]
        out = []
        for subject, found in firing.items():
            active = self._active.get((index, subject))
            if active is None:
                self._active[(index, subject)] = _Active(now, now, found)
                out.append(self._event(index, subject, "firing", found, now, now, 0))
                continue
            active.last = found
            if now - active.last_sent < rule.repeat_s:
                active.suppressed += 1
                self.suppressed += 1
                continue
            active.last_sent = now
            out.append(self._event(index, subject, "firing", found, active.since, now, active.sent))
            active.sent += 1
        return out

    def _cleared(self, index: int, firing: dict[str, Firing], now: float) -> list[Event]:
        gone = [key for key in self._active if key[0] == index and key[1] not in firing]
        out = []
        for key in gone:
            active = self._active.pop(key)
            if self.rules[index].type not in EVENTS_ONLY:
                last, since = active.last, active.since
                out.append(self._event(index, key[1], "resolved", last, since, now, 0))
        return out

    def _event(
        self,
        index: int,
        subject: str,
        state: State,
        found: Firing,
        since: float,
        now: float,
        repeat: int,
    ) -> Event:
        return Event(
            self.rules[index],
            index,
            subject,
            state,
            found.value,
            found.threshold,
            since,
            now,
            repeat,
            found.details,
        )
