"""The metadata of a page: title, authors, description, image, site name,
categories and tags, read with the engine's own functions.

The engine's `extract_metadata` also searches the whole page for a licence
and runs a date finder; the article fields use neither (dates.py orders the
dates itself), and the licence scan alone was a sixth of the extraction's
time on the benchmark page (docs/BENCHMARKS.md). So the steps the fields
need are called here, in the engine's order: meta tags, then JSON-LD over
them, then the page's markup for what is still missing. Categories and tags
the page states in its meta tags or JSON-LD spare the scan of its links,
and so does a page with no link to a category or tag page at all (one
XPath in C says so; the engine's scan makes a Python object of every
candidate link first).

These functions are the engine's module API rather than its documented
one; the dependency's version range (pyproject.toml) keeps them in place,
and tests/unit/worker/test_article_fields.py reads every field they give.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import lxml.html
from lxml import etree

if TYPE_CHECKING:
    from trafilatura.settings import Document


# Whether the page links to a category or tag page (the engine only takes
# links whose path has /category/, /categories/, /tag/, /tags/ and the like).
_LINKS_TO = etree.XPath("boolean(.//a[contains(@href, $part)])")
_SECTION = etree.XPath(
    './/head//meta[@property="article:section" or contains(@name, "subject")]/@content'
)


def _categories(doc: lxml.html.HtmlElement) -> list[str]:
    from trafilatura.metadata import extract_catstags

    if _LINKS_TO(doc, part="/categor"):
        return list(extract_catstags("category", doc))
    sections = _SECTION(doc)
    assert isinstance(sections, list)  # an XPath to attribute values gives a list
    return [str(section).strip() for section in sections if str(section).strip()]


def _tags(doc: lxml.html.HtmlElement) -> list[str]:
    from trafilatura.metadata import extract_catstags

    return list(extract_catstags("tag", doc)) if _LINKS_TO(doc, part="/tag") else []


def page_metadata(doc: lxml.html.HtmlElement) -> Document:
    """The page's metadata (the document is read, not changed)."""
    from trafilatura import metadata as engine

    found = engine.examine_meta(doc)
    if found.author and " " not in found.author:
        found.author = None  # a one-word author tag is a handle or a site, not a name
    with contextlib.suppress(Exception):  # the engine's JSON-LD reader is not ours
        found = engine.extract_meta_json(doc, found)
    found.title = found.title or engine.extract_title(doc)
    found.author = found.author or engine.extract_author(doc)
    found.sitename = (found.sitename or engine.extract_sitename(doc) or "").lstrip("@") or None
    found.categories = found.categories or _categories(doc)
    found.tags = found.tags or _tags(doc)
    found.clean_and_trim()
    return found
