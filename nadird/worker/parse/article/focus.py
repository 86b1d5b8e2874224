"""The page the engine is given: the page's focus, without what it drops anyway.

Most of the engine's time goes into passes over every element of the tree
it is given (its pruning expressions, its cleaning, three copies of the
tree), while the story of a news page or a blog post sits in one container
its markup names: an `<article>`, a `<main>`, an element with
`itemprop="articleBody"` or `role="main"`. When one such container holds
most of the page's paragraph text, the engine is given a copy of that
container alone, in a page of its own, instead of the whole page: the same
content from a fraction of the elements (the engine's fast path on the
150 KB page of scripts/bench_article.py: ~3.4 ms instead of ~15; a
standfirst placed above the container is no longer in it). The metadata,
dates, language and kind are still read from the whole page (fields.py),
and the worker's document is never changed: the engine works on a copy
either way.

The guard, measured on the 127 real pages of scripts/bench_article_quality.py
(docs/BENCHMARKS.md, "Articles: the engine on the page's focus"):

* the container holds at least FOCUS_SHARE of the text of the page's `<p>`
  elements: a page of `<article>` teasers (each a small share), an
  `<article>` holding only the headline, or a story whose paragraphs sit
  outside its `<article>` keep the whole page. Any share from 0.51 to 0.8
  gave the same scores; 0.6 focuses 69 of them (85 of the 155 pages the
  sets hold now, with no score lower than on the whole page);
* and at least FOCUS_MIN_CHARS of it: on a page with almost no `<p>` text
  the shares say nothing (with no minimum, a magazine page written in
  `<div>`s was focused on one of its `<article>`s and lost its text);
* of the containers that pass, the innermost is taken (a `<main>` holding
  an `<article>` and its comments gives the `<article>`).

The copy is also stripped of the elements the engine deletes first
whatever they hold (scripts, styles, navigation, forms' inputs, iframes...:
its own list, less the few it reads before deleting), in one C-level pass:
its later passes then run over fewer elements (~5 % of its time, the same
text on every real page). The list is read from the engine
(`trafilatura.settings.MANUALLY_CLEANED`, its module API like metadata.py's
functions, kept in place by the dependency's version range), so a release
that changes it changes this step with it. The page's JSON-LD is kept,
where the engine recognizes a forum thread, whose posts it keeps.
"""

from __future__ import annotations

from copy import deepcopy
from functools import cache
from typing import cast

import lxml.html
from lxml import etree

# The containers a page's markup names as its main content, in document
# order. (Matching the attributes through the attribute axis is ~4 times
# faster than testing every element's attributes.)
_CONTAINERS = etree.XPath(
    "//article | //main | //@itemprop[.='articleBody']/.. | //@role[.='main']/.."
)
_PARAGRAPH_TEXT = etree.XPath(".//p//text()", smart_strings=False)
_JSON_LD = etree.XPath("//script[@type='application/ld+json']")

FOCUS_SHARE = 0.6  # of the page's paragraph text, at least, in the container (> 0.5)
FOCUS_MIN_CHARS = 250  # of paragraph text in the container, at least

# Elements the engine deletes with their content but reads first: forms
# (one wrapping the whole page is kept), math (its formula is kept as
# text), figures (one holding a table is kept); with images, pictures and
# their sources too.
_READ_BEFORE_DELETED = frozenset({"form", "math", "figure"})
_IMAGE_ELEMENTS = frozenset({"picture", "source"})


def _paragraph_chars(element: etree._Element) -> int:
    # A text-only path with smart_strings=False gives a list of str.
    return sum(map(len, cast(list[str], _PARAGRAPH_TEXT(element))))


def _elements(path: etree.XPath, doc: etree._Element) -> list[etree._Element]:
    # An element-only path gives a list of elements.
    return cast(list[etree._Element], path(doc))


def page_focus(doc: lxml.html.HtmlElement) -> etree._Element | None:
    """The container holding the page's story, or None (the whole page is needed)."""
    containers = [el for el in _elements(_CONTAINERS, doc) if el.tag not in ("html", "body")]
    if not containers:
        return None
    needed = max(FOCUS_MIN_CHARS, FOCUS_SHARE * _paragraph_chars(doc))
    holding = [el for el in containers if _paragraph_chars(el) >= needed]
    # Each holds most of the text, so they nest one in the other; in document
    # order (an ancestor before its descendants) the last is the innermost.
    return holding[-1] if holding else None


def engine_page(doc: lxml.html.HtmlElement, images: bool) -> lxml.html.HtmlElement:
    """A copy of the page's focus in a page of its own, or of the whole page,
    without the elements the engine deletes first anyway."""
    focus = page_focus(doc)
    if focus is None:
        page = deepcopy(doc)
        body = page.find("body")
    else:
        page = lxml.html.Element("html")
        body = etree.SubElement(page, "body")
        story = deepcopy(focus)
        story.tail = None  # the text after the container is not in it
        body.append(story)
    json_ld = [deepcopy(script) for script in _elements(_JSON_LD, doc)]
    for script in json_ld:
        script.tail = None  # the text after it is where it was (or not in the focus)
    etree.strip_elements(page, *_deleted_first(images), with_tail=False)
    (page if body is None else body).extend(json_ld)
    return page


@cache
def _deleted_first(images: bool) -> tuple[str, ...]:
    from trafilatura.settings import MANUALLY_CLEANED

    kept = _READ_BEFORE_DELETED | (_IMAGE_ELEMENTS if images else frozenset())
    return tuple(tag for tag in MANUALLY_CLEANED if tag not in kept)
