"""The master's `alerts` section: channels (where alerts go) and rules (when).

Durations (`repeat`, `after`, `window`) are written as in the revisit
section (90s, 5m, 1h30m, or plain seconds). Secrets never appear in the file:
a channel reads its token or signing key from `secret_file` / `secret_env`
(and `sign_file` / `sign_env` for DingTalk's signing key) when the master
starts. A URL may hold the placeholder `{secret}` where the token goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from nadird.config.checks import check_http_url, positive, seconds

ChannelType = Literal["webhook", "dingtalk", "apprise"]
RuleType = Literal[
    "stall",
    "blocked",
    "worker_gone",
    "error_rate",
    "dead_letters",
    "job_finished",
    "change",
    "replica_lag",
    "replica_superseded",
]
Severity = Literal["info", "warning", "critical"]
DEFAULT_AFTER = {"stall": 300.0, "replica_lag": 60.0}  # seconds; others: 0
# The answers that mean "this site is refusing us" (forbidden, too many
# requests, unavailable) when they come back in a row.
BLOCKING_STATUSES = (403, 429, 503)


@dataclass(frozen=True)
class ChannelConfig:
    type: ChannelType
    # webhook / dingtalk: an http(s) URL; apprise: an Apprise URL
    # (json://, mailto://, tgram://, slack://, wecombot://, feishu://...).
    url: str
    secret_file: str | None = None
    secret_env: str | None = None
    sign_file: str | None = None  # dingtalk: the robot's signing key ("SEC...")
    sign_env: str | None = None
    language: Literal["en", "zh"] = "en"
    queue_size: int = 100  # alerts waiting to be sent; past it they are dropped (counted)
    retries: int = 3  # tries after the first, with doubling back-off
    retry_delay: float = 1.0
    timeout: float = 10.0  # seconds for one delivery
    rate_per_minute: int = 20  # at most this many deliveries a minute

    def __post_init__(self) -> None:
        positive(self, "queue_size", "retry_delay", "timeout", "rate_per_minute")
        if self.retries < 0:
            raise ValueError("retries must be >= 0")
        for a, b in (("secret_file", "secret_env"), ("sign_file", "sign_env")):
            if getattr(self, a) and getattr(self, b):
                raise ValueError(f"set at most one of {a} and {b}")
        if "{secret}" in self.url and not (self.secret_file or self.secret_env):
            raise ValueError("url has {secret} but neither secret_file nor secret_env is set")
        if self.type != "dingtalk" and (self.sign_file or self.sign_env):
            raise ValueError("sign_file / sign_env apply to type dingtalk only")
        if self.type != "apprise":
            check_http_url(self.url.replace("{secret}", "x"))

    @property
    def has_secret(self) -> bool:
        return bool(self.secret_file or self.secret_env)


@dataclass(frozen=True)
class ChangeCondition:
    """When a `change` rule fires: at most one of these; none set is any change."""

    below: float | None = None  # the new value is below this
    above: float | None = None  # the new value is above this
    drop_percent: float | None = None  # down by more than this % of the old value
    rise_percent: float | None = None  # up by more than this %

    def __post_init__(self) -> None:
        set_ = [name for name, value in self.items() if value is not None]
        if len(set_) > 1:
            raise ValueError(f"when: set at most one of {', '.join(set_)}")
        for name in ("drop_percent", "rise_percent"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"when.{name} must be >= 0")

    def items(self) -> list[tuple[str, float | None]]:
        return [(name, getattr(self, name)) for name in CONDITIONS]

    @property
    def kind(self) -> str:
        """The condition's name, or "any"."""
        return next((name for name, value in self.items() if value is not None), "any")

    @property
    def limit(self) -> float:
        """X or N of the condition (0 for any change)."""
        return next((value for _, value in self.items() if value is not None), 0.0)


CONDITIONS = ("below", "above", "drop_percent", "rise_percent")


@dataclass(frozen=True)
class RuleConfig:
    type: RuleType
    channels: list[str]
    severity: Severity = "warning"
    # Not more than one alert per this for the same rule and subject.
    repeat: str | float = "30m"
    # stall: no page stored for this long; worker_gone: silent or gone this long;
    # replica_lag: the replica this far behind (master.replica).
    after: str | float | None = None
    minutes: float | None = None  # the same as `after`, in minutes
    # blocked: this many blocking answers in a row; dead_letters: this many new
    # dead letters within `window`; error_rate: at least this many pages in `window`.
    count: int | None = None
    threshold: float = 0.5  # error_rate: errors / pages above this
    window: str | float = "10m"
    statuses: list[int] = field(default_factory=lambda: list(BLOCKING_STATUSES))
    # stall, blocked, error_rate, dead_letters, change: only this job's pages;
    # every rule names it in the text (and it is checked against `jobs`).
    job: str | None = None
    domain: str | None = None  # blocked / error_rate: only this domain
    fields: list[str] = field(default_factory=list)  # change: the fields watched
    when: Literal["any"] | ChangeCondition = "any"  # change: what change fires

    def __post_init__(self) -> None:
        if not self.channels:
            raise ValueError("channels must name at least one channel")
        if self.type == "change":
            if self.job is None or not self.fields:
                raise ValueError("a change rule needs job and fields (the fields watched)")
        elif self.fields or self.when != "any":
            raise ValueError("fields and when apply to type change only")
        if self.after is not None and self.minutes is not None:
            raise ValueError("set at most one of after and minutes")
        if self.minutes is not None and self.minutes <= 0:
            raise ValueError("minutes must be > 0")
        if self.count is not None and self.count < 1:
            raise ValueError("count must be >= 1")
        if not 0 <= self.threshold <= 1:
            raise ValueError("threshold must be between 0 and 1")
        seconds("repeat", self.repeat)
        seconds("window", self.window)
        if self.after is not None:
            seconds("after", self.after)

    @property
    def repeat_s(self) -> float:
        return seconds("repeat", self.repeat)

    @property
    def window_s(self) -> float:
        return seconds("window", self.window)

    @property
    def after_s(self) -> float:
        """stall: 5 minutes unless set; replica_lag: 1 minute (master.replica_max_lag's
        default); worker_gone: at once unless set."""
        if self.minutes is not None:
            return self.minutes * 60.0
        if self.after is not None:
            return seconds("after", self.after)
        return DEFAULT_AFTER.get(self.type, 0.0)

    def count_or(self, default: int) -> int:
        return default if self.count is None else self.count

    @property
    def condition(self) -> ChangeCondition:
        return ChangeCondition() if self.when == "any" else self.when


@dataclass(frozen=True)
class AlertsConfig:
    channels: dict[str, ChannelConfig] = field(default_factory=dict)
    rules: list[RuleConfig] = field(default_factory=list)
    # At stop, how long queued alerts (a `job_finished` one) may still take.
    drain_timeout: float = 2.0

    def __post_init__(self) -> None:
        positive(self, "drain_timeout")


def check_alerts(
    alerts: AlertsConfig,
    jobs: set[str],
    fields: dict[str, set[str]] | None = None,
    revisiting: set[str] | None = None,
) -> tuple[str, str] | None:
    """The first rule naming an unknown channel, job or (change) field of the
    job (`fields`: job -> its field names), or a change rule of a job that
    never revisits: (key, what is wrong)."""
    for i, rule in enumerate(alerts.rules):
        for j, name in enumerate(rule.channels):
            if name not in alerts.channels:
                known = ", ".join(sorted(alerts.channels)) or "none defined"
                return f"alerts.rules[{i}].channels[{j}]", f"unknown channel {name!r} ({known})"
        if rule.job is not None and rule.job not in jobs:
            return f"alerts.rules[{i}].job", f"unknown job {rule.job!r}"
        if rule.type == "change" and revisiting is not None and rule.job not in revisiting:
            why = f"job {rule.job!r} never revisits a page (set jobs.{rule.job}.revisit)"
            return f"alerts.rules[{i}].job", why
        of_job = (fields or {}).get(rule.job or "", set())
        for j, name in enumerate(rule.fields):
            if fields is not None and name not in of_job:
                names = ", ".join(sorted(of_job)) or "none defined"
                why = f"not a field of job {rule.job!r} ({names})"
                return f"alerts.rules[{i}].fields[{j}]", why
    return None
