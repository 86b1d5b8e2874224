"""Crawl jobs: what to extract from a page and which links to follow.

A job travels inside every bag the master hands out (as a plain dict), so a
worker needs no job configuration of its own and stays stateless.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Scope = Literal["same-domain", "allowed-domains", "any"]


@dataclass(frozen=True)
class Selector:
    """One way to find a field. Exactly one of xpath, css or regex is set.

    xpath may select elements (their text is taken), attributes or strings;
    css selects elements, and `attr` takes an attribute instead of the text;
    regex runs on the raw HTML and takes group 1 if the pattern has groups.
    `multiple` returns every match as a list instead of the first one.
    """

    xpath: str | None = None
    css: str | None = None
    regex: str | None = None
    attr: str | None = None
    multiple: bool = False

    def __post_init__(self) -> None:
        given = [k for k in ("xpath", "css", "regex") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("exactly one of xpath, css or regex must be set")


@dataclass(frozen=True)
class LinkRules:
    """Which discovered links are followed."""

    scope: Scope = "same-domain"
    allowed_domains: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    follow: bool = True


@dataclass(frozen=True)
class Job:
    """A named crawl job. `fields` maps a field name to selectors tried in order."""

    name: str = "default"
    fields: dict[str, list[Selector]] = field(default_factory=dict)
    links: LinkRules = field(default_factory=LinkRules)
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
    # Higher first. Seeds get a bonus and each level of depth costs one, so a
    # crawl goes breadth-first within a domain unless a job says otherwise.
    priority: int = 0
    # Transient failures (timeouts, connection errors, 5xx, 429) are retried
    # this many times with exponential back-off, then dead-lettered.
    max_retries: int = 3
    # Routing: only workers of this group, and having every capability
    # listed (e.g. "javascript"), are leased this job's bags.
    group: str | None = None
    requires: list[str] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_wire(cls, raw: dict[str, Any]) -> Job:
        fields = {
            name: [Selector(**sel) for sel in sels] for name, sels in raw.get("fields", {}).items()
        }
        links = LinkRules(**raw.get("links", {}))
        rest = {k: v for k, v in raw.items() if k not in ("fields", "links")}
        return cls(fields=fields, links=links, **rest)
