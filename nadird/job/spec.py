"""Crawl jobs: what to extract from a page and which links to follow.

A job travels inside every bag the master hands out (as a plain dict), so a
worker needs no job configuration of its own and stays stateless. Its parts
(a field's selectors and spec, the link rules, pagination, the proxy ban)
are declared in parts.py; they are imported from here too.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from nadird.common.typecheck import build
from nadird.items.keys import UrlKey, compile_key
from nadird.items.schema import compile_rules
from nadird.job.article import ArticleSpec, article_spec
from nadird.job.fallback import OnFailure
from nadird.job.feeds import FeedsSpec, feeds_spec, with_hubs
from nadird.job.history import HistoryKeep
from nadird.job.login import LoginSpec
from nadird.job.parser_choice import ParserOption, check_parser
from nadird.job.parts import FieldSpec, LinkRules, Pagination, ProxyBan, Selector
from nadird.job.request import check_cookies, check_headers
from nadird.revisit.parse import revisit_policy_of
from nadird.revisit.policy import RevisitPolicy

# The parts too: the code imports them from here, with the Job they make.
__all__ = [
    "DEFAULT_HUB_PATTERNS", "JAVASCRIPT", "PROXY_CAPABILITY", "RESOURCE_TYPES", "FieldSpec",
    "Job", "LinkRules", "Pagination", "ProxyBan", "RenderMode", "RenderWait", "Selector",
]  # fmt: skip
# URLs that usually list other pages: a directory-like path, a category, tag,
# section or archive, a page number. Matched (re.search) on canonical URLs.
DEFAULT_HUB_PATTERNS = [
    r"^[^?]*/$",
    r"/(categor(y|ies)|tags?|sections?|archives?|topics?|collections?)(/|$|\?)",
    r"[?&](page|pg|offset|start)=\d+(&|$)",
]
RenderMode = bool | Literal["auto"]
RenderWait = Literal["settle", "load", "domcontentloaded", "networkidle"]
# Playwright's resource types: what `render_block` may name.
RESOURCE_TYPES = frozenset(
    {
        "document",
        "stylesheet",
        "image",
        "media",
        "font",
        "script",
        "texttrack",
        "xhr",
        "fetch",
        "eventsource",
        "websocket",
        "manifest",
        "other",
    }
)
# A renderer needs this worker capability; jobs that render require it.
JAVASCRIPT = "javascript"
# A worker with proxies of group G has the capability "proxy:G".
PROXY_CAPABILITY = "proxy:"


@dataclass(frozen=True)
class Job:
    """A named crawl job. `fields` maps a field name to selectors tried in order."""

    name: str = "default"
    fields: dict[str, list[Selector]] = field(default_factory=dict)
    links: LinkRules = field(default_factory=LinkRules)
    paginate: Pagination | None = None
    # Per field: processors, type and required (a field of `fields`).
    schema: dict[str, FieldSpec] = field(default_factory=dict)
    max_depth: int | None = None
    max_pages: int | None = None
    delay: float | None = None
    domain_concurrency: int | None = None
    # Politeness switches, read by workers (defaults keep older configs valid).
    robots: bool = True  # obey robots.txt; disallowed URLs are recorded, not fetched
    sitemaps: bool = False  # read robots.txt Sitemap: lines and /sitemap.xml per host
    # Pages per registrable domain. Workers stop emitting links to a domain
    # they alone fetched this many pages of; the exact cap is the master's.
    max_pages_per_domain: int | None = None
    strip_params: list[str] | None = None  # None: the worker's fetch.strip_params
    proxies: bool = True  # use the worker's fetch.proxies when it has any
    # Only proxies of this group (fetch.proxies.groups / a provider's group);
    # the job then needs the capability "proxy:<group>", which a worker has
    # when it has such proxies, so its bags only go there.
    proxy_group: str | None = None
    # "bag": one proxy for all of a bag's requests while it works (sites that
    # tie a session to an address); "request": the next proxy every time.
    proxy_sticky: Literal["request", "bag"] = "request"
    proxy_ban: ProxyBan = field(default_factory=ProxyBan)
    # Higher first. Seeds get a bonus and each level of depth costs one, so a
    # crawl goes breadth-first within a domain unless a job says otherwise.
    priority: int = 0
    # Hub pages first: a URL matching one of these (listings, categories,
    # pagination, directory-like paths) gets hub_bonus, so the pages that
    # lead to many others are fetched before the ones they lead to.
    hub_patterns: list[str] = field(default_factory=lambda: list(DEFAULT_HUB_PATTERNS))
    hub_bonus: int = 10
    # Transient failures (timeouts, connection errors, 5xx, 429) are retried
    # this many times with exponential back-off, then dead-lettered.
    max_retries: int = 3
    # Routing: only workers of this group, and having every capability
    # listed (e.g. "javascript"), are leased this job's bags.
    group: str | None = None
    requires: list[str] = field(default_factory=list)
    # JavaScript rendering in a headless browser (see worker/render_step.py).
    # true: every HTML page is rendered; "auto": only a page whose fetched
    # HTML lacks a required field (render_when_missing, or every field when
    # that is empty), or with render_when_invalid whose item fails its
    # schema. A job that may render requires the "javascript"
    # capability, added here, so its bags only go to workers with a browser.
    render: RenderMode = False
    render_when_missing: list[str] = field(default_factory=list)
    render_when_invalid: bool = False  # auto: also an item failing its schema
    # What is awaited first: "settle" (the load event, then render_quiet
    # seconds with no request in flight and no DOM change) or a page event.
    render_wait: RenderWait = "settle"
    render_wait_for: str | None = None  # then a CSS selector to appear
    render_quiet: float = 0.5
    render_max_wait: float = 15.0  # seconds for all of it; then a render_timeout error
    render_block: list[str] = field(default_factory=lambda: ["image", "font", "media"])
    render_third_party: bool = False  # sub-requests outside the bag's domain
    # Continuous crawling (nadird/revisit/policy.py has the shapes): when
    # known URLs are fetched again, and after how long a URL found again by
    # link discovery is due again. Parsed and checked when the config loads.
    revisit: dict[str, Any] | None = None
    expire: str | float | None = None
    # How long the page history is kept (job/history.py): keep_for, keep_versions.
    history: HistoryKeep | None = None
    # CSS selectors of what may change without the page changing (clocks,
    # ads, counters): removed before the page's text signature is taken.
    signature_ignore: list[str] = field(default_factory=list)
    # An item's identity (items/keys.py): field names, or a regex on the URL.
    # Without one the URL is the identity.
    item_key: list[str] | UrlKey | None = None
    # A URL that dead-letters here, or whose item stays invalid, is handed to
    # this (simpler) job; checked against the other jobs when the config loads.
    on_failure: OnFailure | None = None
    # Sent with every request of the job; a request's own headers and
    # cookies of the same name win (nadird/job/request.py checks both alike).
    headers: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    # What the sites set is sent back to them (worker/fetch/cookies.py).
    cookie_jar: bool = True
    # A login whose session goes with every request (nadird/job/login.py).
    login: LoginSpec | None = None
    # true: title, text, markdown, dates... of every HTML page, with no rule
    # written (job/article.py); a field the job declares wins over the generic one.
    article: bool | ArticleSpec = False
    # An article whose text is a near-duplicate of one seen before in the job:
    # stored as it is (keep), with `near_duplicate_of` (mark), or with no item (drop).
    near_duplicates: Literal["keep", "mark", "drop"] = "mark"
    # true: feeds and sitemaps found and revisited as hubs, their articles
    # fetched first (job/feeds.py); a mapping tunes it.
    feeds: bool | FeedsSpec = False
    parser: ParserOption = "auto"  # lxml or Lexbor for its pages: job/parser_choice.py

    def __post_init__(self) -> None:
        check_headers(self.headers, "headers")
        check_cookies(self.cookies, "cookies")
        for i, pattern in enumerate(self.hub_patterns):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"hub_patterns[{i}]: invalid regex {pattern!r}: {exc}") from None
        self._check_schema()
        self._check_paginate()
        if self.proxy_group is not None:
            needed = f"{PROXY_CAPABILITY}{self.proxy_group}"
            if not self.proxies:
                raise ValueError("proxy_group needs proxies: true")
            if needed not in self.requires:
                object.__setattr__(self, "requires", [*self.requires, needed])
        self._check_key()
        object.__setattr__(self, "article", article_spec(self.article) or False)
        if self.near_duplicates == "drop" and not self.article:
            raise ValueError("near_duplicates: drop needs article: (the text it compares)")
        object.__setattr__(self, "feeds", feeds_spec(self.feeds) or False)
        check_parser(self)
        if self.render_when_invalid and self.render != "auto":
            raise ValueError("render_when_invalid needs render: auto")
        if self.render is False:
            return
        if self.render_max_wait <= 0:
            raise ValueError("render_max_wait must be > 0")
        if self.render_quiet <= 0:
            raise ValueError("render_quiet must be > 0")
        unknown = sorted(set(self.render_block) - RESOURCE_TYPES)
        if unknown:
            raise ValueError(f"render_block: unknown resource type {unknown[0]!r}")
        missing = [f for f in self.render_when_missing if f not in self.fields]
        if missing:
            raise ValueError(f"render_when_missing: {missing[0]!r} is not a field of the job")
        if self.render == "auto" and not self.fields:
            raise ValueError("render: auto needs fields to check (render_when_missing)")
        if self.render_wait_for is not None and not self.render_wait_for.strip():
            raise ValueError("render_wait_for must not be empty")
        if JAVASCRIPT not in self.requires:
            # Frozen: __post_init__ is the one place a field may still be set.
            object.__setattr__(self, "requires", [*self.requires, JAVASCRIPT])

    def _check_schema(self) -> None:
        for name in self.schema:
            if name not in self.fields:
                raise ValueError(f"schema.{name}: no selector names this field (add it to fields)")
        compile_rules(self.schema)

    def _check_paginate(self) -> None:
        if self.paginate is None:
            return
        for key, name in self.paginate.field_names().items():
            if name not in self.fields:
                raise ValueError(f"paginate.{key}: {name!r} is not a field of the job")

    def reads_json(self) -> bool:
        """Whether a JSON response means anything to this job (so it is parsed)."""
        if self.links.jmes or self.paginate is not None:
            return True
        return any(sel.jmes is not None for sels in self.fields.values() for sel in sels)

    def _check_key(self) -> None:
        compile_key(self.item_key)
        if isinstance(self.item_key, list):
            for i, name in enumerate(self.item_key):
                if name not in self.fields:
                    raise ValueError(f"item_key[{i}]: {name!r} is not a field of the job")

    def revisit_policy(self, key: str = "revisit", source: str = "(job)") -> RevisitPolicy | None:
        """The job's revisit policy (None: crawled once); ConfigError names `key`."""
        if "_policy" in self.__dict__:
            cached: RevisitPolicy | None = self.__dict__["_policy"]
            return cached
        policy = revisit_policy_of(self.revisit, self.expire, key, source)
        if isinstance(self.feeds, FeedsSpec):
            feeds_key = key.rsplit(".", 1)[0] + ".feeds" if "." in key else "feeds"
            policy = with_hubs(policy, self.feeds, feeds_key, source)
        object.__setattr__(self, "_policy", policy)  # frozen: a cache, not a field
        return policy

    @property
    def revisits(self) -> bool:
        """Whether known URLs of this job are fetched again (by time or by discovery)."""
        return self.revisit_policy() is not None

    def required_fields(self) -> list[str]:
        """The fields whose absence makes `render: auto` render a page."""
        return self.render_when_missing or list(self.fields)

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Job:
        fields = {
            name: [Selector(**sel) for sel in sels] for name, sels in raw.get("fields", {}).items()
        }
        links = LinkRules(**raw.get("links", {}))
        schema = {name: FieldSpec(**spec) for name, spec in raw.get("schema", {}).items()}
        paginate = raw.get("paginate")
        ban = ProxyBan(**raw.get("proxy_ban", {}))
        login = raw.get("login")
        nested = ("fields", "links", "schema", "paginate", "proxy_ban", "item_key", "on_failure")
        rest = {k: v for k, v in raw.items() if k not in (*nested, "login", "history")}
        history = raw.get("history")
        key = raw.get("item_key")
        on_failure = raw.get("on_failure")
        return cls(
            fields=fields,
            links=links,
            schema=schema,
            paginate=Pagination(**paginate) if paginate is not None else None,
            proxy_ban=ban,
            item_key=UrlKey(**key) if isinstance(key, dict) else key,
            on_failure=None if on_failure is None else OnFailure(**on_failure),
            login=None if login is None else build(LoginSpec, login, "login"),
            history=None if history is None else HistoryKeep(**history),
            **rest,
        )
