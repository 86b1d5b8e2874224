"""Feeds and sitemaps read as what they are, never as HTML (jobs with `feeds:`).

A fetched document is sniffed by its first bytes: RSS 2.0, RSS 1.0 (RDF),
Atom and JSON Feed go to fastfeedparser (lxml underneath, entities never
resolved, nothing loaded from the network); sitemaps (urlset, sitemapindex,
Google News extensions) to lxml with the same safe settings as
fetch/sitemaps.py. Each entry keeps what the document states of it: its
title, publication and update dates (ISO 8601 when the date could be read,
else left out and counted).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import fastfeedparser
from lxml import etree

from nadird.items.dates import DateError, parse_datetime

FEED_ROOTS = re.compile(rb"<(rss|feed|rdf:RDF|RDF)[\s>]")
SITEMAP_ROOTS = re.compile(rb"<((?:\w+:)?(?:urlset|sitemapindex))[\s>]")
JSON_FEED = re.compile(rb'"version"\s*:\s*"https?://jsonfeed\.org/version/')
SNIFF_BYTES = 2048
MAX_TITLE = 300
_NEWS = "{http://www.google.com/schemas/sitemap-news/0.9}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One article a feed or sitemap lists, with what it states of it."""

    url: str
    title: str | None = None
    published: str | None = None  # ISO 8601, UTC
    updated: str | None = None

    def to_data(self) -> dict[str, str]:
        return {
            k: v
            for k, v in (
                ("url", self.url),
                ("title", self.title),
                ("published", self.published),
                ("updated", self.updated),
            )
            if v
        }


@dataclass(slots=True)
class FeedRead:
    """What one document gave: its kind, entries (at most max_entries) and
    the entries left out, by reason."""

    kind: str  # rss | atom | rdf | json | urlset | sitemapindex
    entries: list[Entry] = field(default_factory=list)
    no_url: int = 0  # entries without a link
    bad_date: int = 0  # a date stated but unreadable
    over_limit: int = 0  # past max_entries

    def summary(self) -> dict[str, int | str]:
        return {
            "kind": self.kind,
            "entries": len(self.entries),
            "no_url": self.no_url,
            "bad_date": self.bad_date,
            "over_limit": self.over_limit,
        }


class NotAFeed(ValueError):
    """The document is neither a feed nor a sitemap (or could not be read as one)."""


def sniff(body: bytes) -> str | None:
    """ "feed", "sitemap" or None, from the first bytes of a document."""
    head = body[:SNIFF_BYTES]
    if SITEMAP_ROOTS.search(head):
        return "sitemap"
    if FEED_ROOTS.search(head):
        return "feed"
    if head.lstrip()[:1] == b"{" and JSON_FEED.search(head):
        return "feed"
    return None


def read_document(body: bytes, max_entries: int) -> FeedRead:
    """The entries of a feed or sitemap; NotAFeed when it is neither."""
    kind = sniff(body)
    if kind == "sitemap":
        return read_sitemap(body, max_entries)
    if kind == "feed":
        return read_feed(body, max_entries)
    raise NotAFeed("not a feed or sitemap")


def _date(value: Any, read: FeedRead) -> str | None:
    """A stated date as ISO 8601 UTC; None (counted) when it cannot be read."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = parse_datetime(value, datetime.now(UTC))
    except DateError:
        read.bad_date += 1
        return None
    return parsed.astimezone(UTC).isoformat()


def _add(read: FeedRead, url: Any, title: Any, published: Any, updated: Any, limit: int) -> None:
    if not isinstance(url, str) or not url.strip():
        read.no_url += 1
        return
    if len(read.entries) >= limit:
        read.over_limit += 1
        return
    name = title.strip()[:MAX_TITLE] if isinstance(title, str) and title.strip() else None
    read.entries.append(Entry(url.strip(), name, _date(published, read), _date(updated, read)))


def read_feed(body: bytes, max_entries: int) -> FeedRead:
    try:
        parsed = fastfeedparser.parse(
            body,
            include_content=False,
            include_media=False,
            include_enclosures=False,
            include_tags=False,
        )
    except (ValueError, json.JSONDecodeError, etree.LxmlError) as exc:
        raise NotAFeed(str(exc)[:200]) from None
    read = FeedRead(_feed_kind(body))
    for entry in parsed.entries:
        _add(
            read,
            entry.get("link"),
            entry.get("title"),
            entry.get("published"),
            entry.get("updated"),
            max_entries,
        )
    return read


def _feed_kind(body: bytes) -> str:
    head = body[:SNIFF_BYTES]
    if head.lstrip()[:1] == b"{":
        return "json"
    match = FEED_ROOTS.search(head)
    root = match.group(1) if match else b"rss"
    return {b"rss": "rss", b"feed": "atom"}.get(root, "rdf")


_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, huge_tree=False, recover=True, load_dtd=False
)


def read_sitemap(body: bytes, max_entries: int) -> FeedRead:
    try:
        root = etree.fromstring(body, parser=_PARSER)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise NotAFeed(str(exc)[:200]) from None
    if root is None:
        raise NotAFeed("empty sitemap")
    kind = etree.QName(root).localname
    if kind not in ("urlset", "sitemapindex"):
        raise NotAFeed(f"not a sitemap: <{kind}>")
    read = FeedRead(kind)
    child = "{*}url" if kind == "urlset" else "{*}sitemap"
    for item in root.iterfind(child):
        news = item.find(f"{_NEWS}news")
        title = published = None
        if news is not None:
            title = news.findtext(f"{_NEWS}title")
            published = news.findtext(f"{_NEWS}publication_date")
        _add(
            read,
            item.findtext("{*}loc"),
            title,
            published,
            item.findtext("{*}lastmod"),
            max_entries,
        )
    return read
