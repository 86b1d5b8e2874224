"""`feeds: true` on a job: news sites followed through their feeds and sitemaps.

What a job may tune lives here (the job travels to the workers in every
bag); finding and reading feeds is the worker's (worker/parse/feeds.py,
worker/follow/feedlinks.py), the order of the queue the master's.

Hubs are the URLs a site announces new articles on: its feeds, its
sitemaps, and whatever `hubs` matches. They are revisited on `revisit`
(an adaptive schedule by default, which learns each hub's rate of new
entries), ahead of the job's own revisit rules. Articles are fetched once,
as soon as they are found, before listing pages; archive pages past
`max_page` are not followed at all.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field, replace
from typing import Any

from nadird.common.errors import ConfigError
from nadird.revisit.durations import parse_duration
from nadird.revisit.parse import parse_revisit
from nadird.revisit.policy import RevisitPolicy, Rule

# Where feeds and sitemaps live, by their URL: the revisit schedule is
# chosen by URL, so a feed must be recognisable by its address. A URL that
# matches and answers with something else is a failed feed (counted).
FEED_URLS = re.compile(
    r"(?i)(?:/feeds?|/rss|/atom|sitemap[^/]*)(?:\.(?:xml|json|rss|atom|gz))*/?(?:\?[^/]*)?$"
    r"|(?i:\.(?:rss|atom)$|/(?:feed|index|rss|atom)\.(?:xml|json)$)"
)
# Other hubs by default: a site's home page (it lists the newest articles).
DEFAULT_HUBS = r"^https?://[^/?#]+/?$"
# An archive or listing page past its first: ?page=N, /page/N, ?p=N, ?offset=N.
PAGINATION = re.compile(r"(?i)(?:[?&](?:page|pg|p|paged)=|/page/)(\d{1,9})(?:[/&#]|$)")


@dataclass(frozen=True)
class FeedsSpec:
    """How a job follows news sites (`feeds: true` takes these defaults)."""

    # The revisit schedule of hubs (the forms of a job's `revisit:`). A hub
    # is checked again after `min` at first (not the geometric mean of min
    # and max, 4 minutes here): what it lists is what is new.
    revisit: dict[str, Any] = field(
        default_factory=lambda: {"adaptive": {"min": "30s", "max": "30m", "initial": "30s"}}
    )
    # A regex (re.search on the URL) naming the hubs besides feeds and
    # sitemaps ("": none); section pages, say: '^https?://[^/]+/(world|business)/$'.
    hubs: str = DEFAULT_HUBS
    # Archive pages after this page number are not followed (0: none at all).
    max_page: int = 2
    # Entries read from one feed or sitemap; the rest are counted, not sent.
    max_entries: int = 1000
    # A page one fetch of which found at least this many new articles is
    # made a hub (a section front, say; 0: none is); a hub made so that
    # finds none on `forget` checks in a row is a page again.
    learn: int = 5
    forget: int = 3
    # An article is fetched again once, this long after its first fetch
    # (for corrections), unless the job's `revisit:` gives it a schedule;
    # "never" by default: a second fetch of every article would take as much
    # of each site's politeness budget as the new articles themselves.
    recheck: str | float = "never"

    def __post_init__(self) -> None:
        try:
            re.compile(self.hubs or "")
        except re.error as exc:
            raise ValueError(f"hubs: invalid regex {self.hubs!r}: {exc}") from None
        if self.max_page < 0:
            raise ValueError("max_page: must be >= 0")
        if self.max_entries <= 0:
            raise ValueError("max_entries: must be > 0")
        if self.recheck != "never":
            try:
                parse_duration(self.recheck)
            except ValueError as exc:
                said = str(exc).removeprefix("expected ")
                raise ValueError(f"recheck: expected never or {said}") from None
        if self.learn < 0:
            raise ValueError("learn: must be >= 0")
        if self.forget <= 0:
            raise ValueError("forget: must be > 0")


def recheck_after(spec: FeedsSpec) -> float | None:
    """Seconds after its first fetch an article is fetched again (None: never)."""
    return None if spec.recheck == "never" else parse_duration(spec.recheck)


def feeds_spec(value: bool | FeedsSpec | dict[str, Any]) -> FeedsSpec | None:
    """The spec of a job's `feeds:` value (its wire form included); None when off."""
    if isinstance(value, FeedsSpec):
        return value
    if isinstance(value, dict):
        return FeedsSpec(**value)
    return FeedsSpec() if value else None


def with_hubs(
    policy: RevisitPolicy | None, spec: FeedsSpec, key: str, source: str
) -> RevisitPolicy:
    """The job's policy with the hubs' schedule as its first rule; `key` is
    the feeds key's full name (jobs.news.feeds), for a ConfigError."""
    key = f"{key}.revisit"
    hubs = parse_revisit(spec.revisit, key, source)
    if hubs.default is None or hubs.rules or hubs.expire is not None:
        raise ConfigError(source, key, "expected one schedule: every, adaptive or cron")
    rules = [Rule(FEED_URLS, hubs.default)]
    if spec.hubs:
        rules.append(Rule(re.compile(spec.hubs), hubs.default))
    if policy is None:
        return RevisitPolicy(rules=tuple(rules))
    return replace(policy, rules=(*rules, *policy.rules))


# Every URL: the hubs' rule of a URL known to be a hub (hub_policy).
_ANY_URL = re.compile("")


def hub_policy(policy: RevisitPolicy) -> RevisitPolicy:
    """The policy of a URL that answered as a feed or sitemap, whatever its
    address: the hubs' rule (with_hubs put it first) matches it. A policy
    without that rule (not a feeds job's) is returned as it is."""
    if not policy.rules or policy.rules[0].pattern is not FEED_URLS:
        return policy
    return _as_hub(policy)


@functools.lru_cache(maxsize=64)
def _as_hub(policy: RevisitPolicy) -> RevisitPolicy:
    first = policy.rules[0]
    return replace(policy, rules=(Rule(_ANY_URL, first.schedule), *policy.rules[1:]))


# Queue ranks of a `feeds:` job, added to its priority less the depth:
# feeds and sitemaps first, new articles next, listing pages (the job's
# hub_patterns) after them, archive pages last.
FEED_BONUS = 30
ARTICLE_BONUS = 20
ARCHIVE_PENALTY = -20


def news_rank(url: str, listing: bool, hub: bool = False, known: bool = False) -> int:
    """The rank a URL of a `feeds:` job gets (`listing`: it matched
    hub_patterns; `hub`: it answered as a feed or sitemap, or was learned;
    `known`: fetched before, an article checked again ranks as a listing,
    after the new ones)."""
    if hub or is_feed_url(url):
        return FEED_BONUS
    if page_number(url) is not None:
        return ARCHIVE_PENALTY
    return 0 if listing or known else ARTICLE_BONUS


def is_article(url: str, listing: bool) -> bool:
    """Whether a URL of a `feeds:` job ranks as an article (news_rank)."""
    return news_rank(url, listing) == ARTICLE_BONUS


def hub_rules(feeds: bool | FeedsSpec) -> int:
    """How many of a job's first revisit rules are the hubs' (with_hubs).

    Hubs keep their own estimate (an interval of 0.2 over their rate of new
    entries, within the schedule's bounds) rather than a share of the
    domain's plan: the plan values a page fresh most of the time, a hub is
    worth each new entry soon (docs/jobs/feeds.md, measured in BENCHMARKS).
    """
    if not isinstance(feeds, FeedsSpec):
        return 0
    return 2 if feeds.hubs else 1


def is_listing(url: str, hub_patterns: list[str]) -> bool:
    """Whether the URL is a listing page (a job's hub_patterns) or an archive page."""
    return page_number(url) is not None or any(_compiled(p).search(url) for p in hub_patterns)


def is_hub(url: str, spec: FeedsSpec) -> bool:
    """Whether the URL is one of the job's hubs (a feed, a sitemap, or `hubs`)."""
    return is_feed_url(url) or (bool(spec.hubs) and _compiled(spec.hubs).search(url) is not None)


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def is_feed_url(url: str) -> bool:
    """Whether the URL has the form of a feed or sitemap address."""
    return FEED_URLS.search(url) is not None


def page_number(url: str) -> int | None:
    """The page number of an archive URL (None: not a numbered page)."""
    match = PAGINATION.search(url)
    return int(match.group(1)) if match else None


def past_max_page(url: str, spec: FeedsSpec) -> bool:
    number = page_number(url)
    return number is not None and number > spec.max_page
