"""The console's page of one URL: its stored record, its revisit schedule
and why, its recent fetches, and its versions (paged, newest first) with
the words each changed and its numeric fields charted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nadird.common.errors import InvalidURL
from nadird.common.urls import canonicalize, domain_of, fingerprint
from nadird.job.article import ARTICLE_ERROR, ARTICLE_FIELDS, FALLBACK
from nadird.master.console import format as fmt
from nadird.master.console.archive_view import ArchiveView, archive_view
from nadird.master.console.diffs import VersionView, numeric_columns, version_views
from nadird.master.console.paging import Page, page_number
from nadird.master.results.recent import RecentFetch
from nadird.revisit.policy import Adaptive, Cron, Fixed, RevisitPolicy
from nadird.store.base import PageRecord
from nadird.store.history import Version

if TYPE_CHECKING:
    from nadird.master.state.revisit_db import Entry
    from nadird.master.view.view import MasterView

VERSIONS_PER_PAGE = 20
# The chart shows the latest versions up to this many (each read and parsed
# for it): a 10,000-version page still answers in a few milliseconds.
CHART_VERSIONS = 1000
FETCHES_SHOWN = 50
Why = tuple[str, dict[str, Any]]  # a catalog key and its parameters
# Article fields shown whole in the Stored table: the text and the Markdown
# are long (their words are counted instead; the versions list has them).
LONG_FIELDS = frozenset({"text", "markdown"})


@dataclass(frozen=True)
class ScheduleView:
    entry: Entry
    why: list[Why]
    rate_per_day: float | None  # estimated changes a day (None: no check yet)


@dataclass
class UrlView:
    url: str
    domain: str
    record: PageRecord | None
    schedule: ScheduleView | None
    fetches: list[RecentFetch]
    history: bool = True  # whether the store lists versions
    page: Page = field(default_factory=lambda: Page(1, VERSIONS_PER_PAGE, 0))
    versions: list[VersionView] = field(default_factory=list)
    chart: dict[str, Any] | None = None
    archive: ArchiveView | None = None  # None: the master writes no WARC

    @property
    def article(self) -> list[tuple[str, Any]]:
        """The latest stored version's article fields (job with `article:`),
        in the item's order, then why extraction was given up and which fields
        took the generic step; empty for a page with no article field."""
        data = self.record.data if self.record is not None and self.record.data else {}
        if not any(name in data for name in (*ARTICLE_FIELDS, ARTICLE_ERROR)):
            return []
        facts: list[tuple[str, Any]] = []
        for name in (*ARTICLE_FIELDS, ARTICLE_ERROR, FALLBACK):
            value = data.get(name)
            if name in LONG_FIELDS and isinstance(value, str):
                facts.append((name, {"words": len(value.split())}))
            elif value is not None and value != [] and value != "":
                facts.append((name, value))
        return facts


def why_of(policy: RevisitPolicy | None, url: str) -> list[Why]:
    """Why the URL is revisited when it is: its job's rule (or default) and schedule."""
    if policy is None:
        return [("why.none", {})]
    matched = next((rule for rule in policy.rules if rule.pattern.search(url)), None)
    why: list[Why] = [
        ("why.rule", {"pattern": matched.pattern.pattern})
        if matched is not None
        else ("why.default", {})
    ]
    schedule = policy.schedule_for(url)
    if isinstance(schedule, Fixed):
        every, jitter = fmt.seconds(schedule.every), round(schedule.jitter * 100)
        if jitter:
            why.append(("why.fixed_jitter", {"every": every, "jitter": jitter}))
        else:
            why.append(("why.fixed", {"every": every}))
    elif isinstance(schedule, Adaptive):
        low, high = fmt.seconds(schedule.min), fmt.seconds(schedule.max)
        why.append(("why.adaptive", {"min": low, "max": high}))
    elif isinstance(schedule, Cron):
        why.append(("why.cron", {"expr": schedule.expr, "zone": schedule.timezone}))
    else:
        why.append(("why.never", {}))
    if policy.expire is not None:
        why.append(("why.expire", {"expire": fmt.seconds(policy.expire)}))
    return why


def schedule_of(master: MasterView, entry: Entry | None, url: str) -> ScheduleView | None:
    if entry is None:
        return None
    rate = entry.stats.rate()
    per_day = None if rate is None else rate * 86400
    return ScheduleView(entry, why_of(master.revisit_policy(entry.job), url), per_day)


async def url_view(master: MasterView, url: str, query: Mapping[str, str]) -> UrlView:
    """Everything the URL page shows. StoreError when the store cannot be read."""
    record, entry = await _known(master, url)
    if record is None and entry is None and as_stored(url) != url:
        url = as_stored(url)  # typed or pasted: the master keeps it canonical
        record, entry = await _known(master, url)
    fetches = [f for f in reversed(master.recent_fetches()) if f.url == url][:FETCHES_SHOWN]
    view = UrlView(url, domain_of(url), record, schedule_of(master, entry, url), fetches)
    view.archive = archive_view(master, fingerprint(url))
    job = record.job if record is not None else entry.job if entry is not None else None
    if job is None:
        return view
    listed = await _versions_page(master, job, url, query)
    if listed is None:
        view.history = False
        return view
    view.page, versions = listed
    view.versions = version_views(versions, VERSIONS_PER_PAGE, view.page.next is None)
    latest = await master.page_versions(job, url, 0, CHART_VERSIONS - 1)
    if latest is not None:
        view.chart = numeric_columns(latest[1])
    return view


async def _known(master: MasterView, url: str) -> tuple[PageRecord | None, Entry | None]:
    fp = fingerprint(url)
    return await master.stored_page(fp), master.revisit_entry(fp)


def as_stored(url: str) -> str:
    """A URL as the master keeps it (canonical), so that one typed or pasted
    finds its page; one that is no http(s) URL as it is."""
    try:
        return canonicalize(url)
    except InvalidURL:
        return url


async def _versions_page(
    master: MasterView, job: str, url: str, query: Mapping[str, str]
) -> tuple[Page, list[Version]] | None:
    """The page of versions the query asks for (kept within the history)."""
    wanted = page_number(query, 10**9, VERSIONS_PER_PAGE)  # clamped below, once counted
    listed = await master.page_versions(job, url, wanted.offset, VERSIONS_PER_PAGE)
    if listed is None:
        return None
    total, versions = listed
    page = page_number(query, total, VERSIONS_PER_PAGE)
    if page.number != wanted.number:  # past the end: the last page
        listed = await master.page_versions(job, url, page.offset, VERSIONS_PER_PAGE)
        versions = [] if listed is None else listed[1]
    return page, versions
