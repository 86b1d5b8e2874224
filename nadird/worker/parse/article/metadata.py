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
candidate link first). Likewise the engine's author search in the markup
(a copy of the whole tree, then regular expressions called back into Python
for every class and id of the page: ~0.2 s on a 700 KB documentation page)
runs only when some element has a class, id or attribute its expressions
could match (`_may_name_author`, a superset of them without regular
expressions).

These functions are the engine's module API rather than its documented
one; the dependency's version range (pyproject.toml) keeps them in place,
and tests/unit/worker/test_article_fields.py reads every field they give.
"""

from __future__ import annotations

import contextlib
import re
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


# Every element the engine's author expressions (trafilatura.xpaths.AUTHOR_XPATHS)
# can select is an <author>, has rel="author", or has a class, id, itemprop,
# data-component or data-testid containing one of these parts: their regular
# expressions are alternations of these, or of words containing them
# ("uthor" is author, Author, authorName...). The values are searched as one
# string, in C: an XPath testing every part on every element took ~17 ms on
# a documentation page, this ~2 ms. tests/unit/worker/test_article_fields.py
# checks bylines found in the markup only.
_AUTHOR_PARTS = (
    "uthor", "yline", "byl", "BBL", "username", "screenname", "writer", "channel-name",
    "zuozhe", "bianji", "xiaobian", "submitted-by", "posted-by", "journalist-name",
)  # fmt: skip
_HAS_PART = re.compile("|".join(map(re.escape, _AUTHOR_PARTS)))
# A keywords meta tag lists its words in one attribute ("a, b, c"; Chinese
# and Japanese pages with their own commas), which the engine keeps whole.
_LIST_SEPARATORS = re.compile("[,;\uff0c\uff1b\u3001]")
_NAMING_ATTRS = etree.XPath(
    "//@class | //@id | //@itemprop | //@data-component | //@data-testid", smart_strings=False
)
# The engine takes an element's text, so one without text names nobody (a
# <link rel="author"> in the head, as every Sphinx page has).
_AUTHOR_ELEMENT = etree.XPath(
    "boolean(//@rel[. = 'author']/parent::*[normalize-space()] | //author[normalize-space()])"
)


def _may_name_author(doc: lxml.html.HtmlElement) -> bool:
    """Whether the engine's author search could find anything on the page."""
    if _AUTHOR_ELEMENT(doc):
        return True
    values = _NAMING_ATTRS(doc)
    assert isinstance(values, list)  # an XPath to attribute values gives a list
    return _HAS_PART.search("\n".join(map(str, values))) is not None


def _author_in_markup(doc: lxml.html.HtmlElement) -> str | None:
    from trafilatura.metadata import extract_author

    return extract_author(doc) if _may_name_author(doc) else None


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
    found.author = found.author or _author_in_markup(doc)
    found.sitename = (found.sitename or engine.extract_sitename(doc) or "").lstrip("@") or None
    found.categories = found.categories or _categories(doc)
    found.tags = found.tags or _tags(doc)
    found.clean_and_trim()
    found.categories, found.tags = _each(found.categories), _each(found.tags)
    return found


def _each(values: list[str] | None) -> list[str]:
    """Each category or tag once (whatever its case), in the page's order, a
    value that lists several split into them."""
    kept: dict[str, str] = {}  # casefolded -> as first written
    for value in values or ():
        for part in _LIST_SEPARATORS.split(value):
            if part := part.strip().lstrip("#").strip():  # "#Business" is the tag "Business"
                kept.setdefault(part.casefold(), part)
    return list(kept.values())
