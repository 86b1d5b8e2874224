"""A worker's `fetch.proxies` section: where proxies come from and how they are scored.

Three sources, usable together: `urls` (a fixed list, the default group),
`groups` (fixed lists by group name, e.g. proxies in one country) and
`providers` (URLs that hand out short-lived proxies, polled). Durations are
written as elsewhere (90s, 5m, 1h30m or plain seconds). A provider's key
comes from `secret_file` / `secret_env` and goes where `{secret}` is in its
URL; credentials for the proxies it hands out from `auth_file` / `auth_env`
("user:password"), never from the file itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

from nadird.config.checks import check_http_url, not_negative, positive, seconds

PROXY_SCHEMES = ("http", "https", "socks4", "socks5")
DEFAULT_GROUP = "default"
_GROUP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def check_proxy_url(url: str) -> None:
    """Raise ValueError unless `url` is scheme://host:port with a proxy scheme."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{url!r} does not parse: {exc}") from None
    if parts.scheme.lower() not in PROXY_SCHEMES:
        raise ValueError(
            f"{url!r}: expected http://, https://, socks4:// or socks5:// and a host:port"
        )
    if not parts.hostname or port is None or port == 0:
        raise ValueError(f"{url!r}: expected a host and a port (1-65535)")


def _seconds(name: str, value: str | float | None) -> float | None:
    return None if value is None else seconds(name, value)


def _check_group(name: str, key: str) -> None:
    if not _GROUP_NAME.fullmatch(name):
        raise ValueError(f"{key}: expected a group name of letters, digits, '_', '.' or '-'")


@dataclass(frozen=True)
class ProviderJson:
    """How to read a JSON answer: JMESPath expressions (jmespath.org).

    `items` finds the list of proxies in the answer; for each item,
    `address` gives "host:port" or a proxy URL (an item that is a string is
    the address itself), `expires` an expiry time (epoch seconds, or a date
    like "2026-12-01 10:05:00" in `timezone`) and `ttl` seconds to live."""

    items: str = "@"
    address: str = "@"
    expires: str | None = None
    ttl: str | None = None
    timezone: str = "UTC"

    def __post_init__(self) -> None:
        import zoneinfo

        import jmespath
        from jmespath.exceptions import JMESPathError

        for name in ("items", "address", "expires", "ttl"):
            expression = getattr(self, name)
            if expression is None:
                continue
            try:
                jmespath.compile(expression)
            except JMESPathError as exc:
                reason = str(exc).splitlines()[0]
                raise ValueError(f"{name}: not a JMESPath expression ({reason})") from None
        try:
            zoneinfo.ZoneInfo(self.timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"timezone: unknown time zone {self.timezone!r}") from None


@dataclass(frozen=True)
class ProviderConfig:
    """A URL that returns proxies: one per line, or JSON (see ProviderJson)."""

    url: str
    format: Literal["lines", "json"] = "lines"
    json: ProviderJson = field(default_factory=ProviderJson)
    every: str | float = "60s"  # polled this often, and when the pool runs low
    min_usable: int = 2  # fewer usable proxies of this provider: poll now...
    min_refill: str | float = "5s"  # ...but not sooner than this after the last poll
    lifetime: str | float | None = None  # when the provider states none; None: until dropped
    scheme: str = "http"  # for bare host:port answers
    group: str = DEFAULT_GROUP
    max_proxies: int = 200  # kept from this provider; the oldest go first
    timeout: str | float = "10s"
    secret_file: str | None = None
    secret_env: str | None = None
    auth_file: str | None = None  # "user:password" for the proxies it hands out
    auth_env: str | None = None

    def __post_init__(self) -> None:
        check_http_url(self.url.replace("{secret}", "x"))
        for a, b in (("secret_file", "secret_env"), ("auth_file", "auth_env")):
            if getattr(self, a) and getattr(self, b):
                raise ValueError(f"set at most one of {a} and {b}")
        if "{secret}" in self.url and not (self.secret_file or self.secret_env):
            raise ValueError("url has {secret} but neither secret_file nor secret_env is set")
        if self.scheme.lower() not in PROXY_SCHEMES:
            raise ValueError("scheme: expected http, https, socks4 or socks5")
        _check_group(self.group, "group")
        positive(self, "min_usable", "max_proxies")
        for name in ("every", "timeout", "lifetime", "min_refill"):
            seconds = _seconds(name, getattr(self, name))
            if seconds is not None and seconds <= 0:
                raise ValueError(f"{name} must be > 0")

    @property
    def every_s(self) -> float:
        return _seconds("every", self.every) or 60.0

    @property
    def min_refill_s(self) -> float:
        return _seconds("min_refill", self.min_refill) or 5.0

    @property
    def timeout_s(self) -> float:
        return _seconds("timeout", self.timeout) or 10.0

    @property
    def lifetime_s(self) -> float | None:
        return _seconds("lifetime", self.lifetime)


@dataclass(frozen=True)
class ScoreConfig:
    """A proxy's score, moved by what happens through it (the usual pool
    design): a new proxy starts at `initial`; a success sets it to `max`; a
    failure that is the proxy's costs `failure`, a ban signal `ban`. A
    proxy at or below 0 is dropped (provider proxies) or rests for the
    pool's `cooldown` and comes back at `initial` (fixed ones: they are all
    an operator has)."""

    initial: int = 10
    max: int = 100
    failure: int = 1
    ban: int = 5

    def __post_init__(self) -> None:
        positive(self, "initial", "max", "failure", "ban")
        if self.initial > self.max:
            raise ValueError("initial must be <= max")


@dataclass(frozen=True)
class ProxyConfig:
    """Outgoing proxies, used in turn; one failing max_failures times in a row
    rests for `cooldown` seconds. socks4/socks5 need the `socks` extra."""

    urls: list[str] = field(default_factory=list)
    groups: dict[str, list[str]] = field(default_factory=dict)
    providers: list[ProviderConfig] = field(default_factory=list)
    max_failures: int = 3
    cooldown: float = 300.0
    score: ScoreConfig = field(default_factory=ScoreConfig)
    # A site that failed through this many different proxies in a row is
    # the one failing: its timeouts stop counting against proxies.
    site_blame_after: int = 2
    # Different proxies one request tries while the failure is the proxy's
    # (at most the pool's size); past them the page fails with kind `proxy`
    # and the master retries it later like any transient failure.
    attempts: int = 3

    def __post_init__(self) -> None:
        positive(self, "max_failures", "cooldown", "site_blame_after", "attempts")
        not_negative(self, "site_blame_after")
        for i, url in enumerate(self.urls):
            try:
                check_proxy_url(url)
            except ValueError as exc:
                raise ValueError(f"urls[{i}]: {exc}") from None
        for group, urls in self.groups.items():
            _check_group(group, f"groups.{group}")
            for i, url in enumerate(urls):
                try:
                    check_proxy_url(url)
                except ValueError as exc:
                    raise ValueError(f"groups.{group}[{i}]: {exc}") from None

    @property
    def configured(self) -> bool:
        """Whether this worker is told to use proxies at all."""
        return bool(self.urls or self.providers or any(self.groups.values()))

    def group_names(self) -> list[str]:
        """Every group a proxy of this worker can be in (for routing)."""
        names = {DEFAULT_GROUP} if self.urls else set()
        names |= {g for g, urls in self.groups.items() if urls}
        names |= {p.group for p in self.providers}
        return sorted(names)
