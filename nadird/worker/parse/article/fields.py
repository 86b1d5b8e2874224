"""The generic fields of an article page, within a CPU-time budget.

The engine (engine.py) finds the main content, metadata.py most metadata; dates,
language and the page's kind are read here from what the page states
(dates.py, language.py, kind.py). A page that is not an article keeps its
metadata but no text: a hub's teasers or a product's blurb are not an
article's text.

A page that breaks the extraction never breaks the item: the fields stay
empty and `_article` in the item says why (REASONS), which the worker
also logs and `nadird reextract` counts. The budget interrupts the
extraction where a signal can (budget.py), and is checked between the steps
everywhere; pages long enough to make one step slow are refused before it by
`max_html_chars`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import lxml.html

from nadird.common.logs import get_logger
from nadird.job.article import ARTICLE_ERROR as ARTICLE_ERROR  # the item's marker
from nadird.job.article import ARTICLE_FIELDS, ArticleSpec
from nadird.worker.parse.article.budget import Deadline, OverBudget, run_within
from nadird.worker.parse.article.dates import page_dates, text_date
from nadird.worker.parse.article.engine import load_engine, markdown_of, run_engine
from nadird.worker.parse.article.kind import (
    ARTICLE,
    ARTICLE_TYPES,
    HUB,
    is_link_list,
    page_kind,
    type_names,
)
from nadird.worker.parse.article.language import load_model, page_language
from nadird.worker.parse.article.metadata import page_metadata
from nadird.worker.parse.article.plain import plain_text
from nadird.worker.parse.jsonsources import jsonld_objects

log = get_logger()

OVER_BUDGET = "over_budget"  # the extraction took longer than article.budget
TOO_LARGE = "too_large"  # the HTML is longer than article.max_html_chars
ENGINE_FAILED = "engine_failed"  # the engine raised on this page
NO_DOCUMENT = "no_document"  # the body parsed to no HTML document
REASONS = (OVER_BUDGET, TOO_LARGE, ENGINE_FAILED, NO_DOCUMENT)


def empty_fields(reason: str | None = None) -> dict[str, Any]:
    """Every article field empty; with `reason`, the marker saying why."""
    empty: dict[str, Any] = dict.fromkeys(ARTICLE_FIELDS)
    if reason is not None:
        empty[ARTICLE_ERROR] = reason
    return empty


def _article_ld(doc: lxml.html.HtmlElement) -> tuple[list[dict[str, Any]], list[object]]:
    """(the JSON-LD objects, the article's first; every object's @type)."""
    objects = jsonld_objects(doc)
    types = [obj.get("@type") for obj in objects]

    def is_article(obj: dict[str, Any]) -> bool:
        return bool(type_names([obj.get("@type")]) & ARTICLE_TYPES)

    return sorted(objects, key=lambda obj: not is_article(obj)), types


def _split(value: str | None, sep: str) -> list[str] | None:
    parts = [p.strip() for p in (value or "").split(sep) if p.strip()]
    return parts or None


# What a byline says around its names, which the engine can leave as one:
# "Submitted on Mon, 2019-01-21 13:49" gives "Submitted", "by James Somers,
# February 28, 2010" gives "James Somers" and "February" (or "May 8"); a
# comment form's "Username" label is no name either, nor is one letter.
_BYLINE_WORDS = frozenset((
    "by", "posted", "submitted", "published", "written", "updated", "username",
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
))  # fmt: skip
# What a sentence of an author's biography has and a name has not (after
# its first word: "The Associated Press" signs articles; not "a", which is
# "Dana A. Ford"'s initial once the engine drops its dot), and its length.
_SENTENCE_WORDS = frozenset((
    "an", "the", "and", "as", "at", "in", "on", "for", "with", "about", "who",
    "is", "was", "lives", "works", "writes",
))  # fmt: skip
MAX_NAME_WORDS = 6


def _authors(value: str | None) -> list[str] | None:
    names = [n for n in _split(value, ";") or () if _may_be_a_name(n)]
    return names or None


def _may_be_a_name(name: str) -> bool:
    words = [w for w in (w.strip(".:,").lower() for w in name.split()) if not w.isdigit()]
    return (
        len("".join(words)) >= 2
        and len(words) <= MAX_NAME_WORDS
        and not _SENTENCE_WORDS.intersection(words[1:])
        and not all(w in _BYLINE_WORDS for w in words)
    )


def _ld_text(ld: list[dict[str, Any]], key: str) -> str | None:
    """The first JSON-LD object's `key` that is text (the article's object first)."""
    for obj in ld:
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return None


def _page_title(doc: lxml.html.HtmlElement) -> str | None:
    title = doc.find(".//title")
    text = " ".join((title.text_content() if title is not None else "").split())
    return text or None


def _stated(site_name: str | None, url: str) -> str | None:
    """The site's name when the page states one (the engine falls back to the host)."""
    parts = urlsplit(url)
    if not site_name or site_name.lower() in (parts.hostname, parts.netloc.lower()):
        return None
    return site_name


def _extract(
    doc: lxml.html.HtmlElement, url: str, spec: ArticleSpec, deadline: Deadline
) -> dict[str, Any]:
    listing = is_link_list(doc)  # a hub: the engine is not run (kind.py)
    body = None if listing else run_engine(doc, url, spec.images)
    deadline.check()
    meta = page_metadata(doc)
    ld, types = _article_ld(doc)
    published, modified = page_dates(doc, url, ld)
    kind = HUB if listing else page_kind(doc, types, body, dated=published is not None)
    if kind == ARTICLE and published is None:
        published = text_date(doc, url)
    title = meta.title or _page_title(doc)
    text = plain_text(body, title) if kind == ARTICLE else ""
    fields = empty_fields()
    fields.update(
        kind=kind,
        title=title,
        authors=_authors(meta.author),
        published=published,
        modified=modified,
        description=meta.description or _ld_text(ld, "description"),
        image=meta.image or None,
        site_name=_stated(meta.sitename, url),
        categories=meta.categories or None,
        tags=meta.tags or None,
        language=page_language(doc, text or plain_text(body)),
    )
    if kind == ARTICLE:
        fields.update(text=text or None, markdown=markdown_of(body) or None)
    deadline.check()
    return fields


def article_fields(
    doc: lxml.html.HtmlElement | None, html_chars: int, url: str, spec: ArticleSpec
) -> dict[str, Any]:
    """The article fields of a page; empty ones with the reason when it breaks them."""
    reason = _given_up(doc, html_chars, spec)
    if reason is None and doc is not None:
        load_engine()  # the first page must not pay the imports from its budget
        load_model()
        deadline = Deadline(spec.budget)
        try:
            return run_within(deadline, lambda: _extract(doc, url, spec, deadline))
        except OverBudget:
            reason = OVER_BUDGET
        except Exception as exc:  # the engine is not ours: whatever it raises, on this page
            log.info("article_engine_failed", url=url, error=f"{type(exc).__name__}: {exc}")
            reason = ENGINE_FAILED
    log.info("article_given_up", url=url, reason=reason)
    return empty_fields(reason)


def _given_up(doc: lxml.html.HtmlElement | None, html_chars: int, spec: ArticleSpec) -> str | None:
    if doc is None:
        return NO_DOCUMENT
    if html_chars > spec.max_html_chars:
        return TOO_LARGE
    return None
