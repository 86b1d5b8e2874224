"""The page's focus: the one container that holds its story, for the engine.

Most of the engine's time goes into passes over every element of the tree
it is given (its pruning expressions, its cleaning, three copies of the
tree), while the story of a news page or a blog post sits in one container
its markup names: an `<article>`, a `<main>`, an element with
`itemprop="articleBody"` or `role="main"`. When one such container holds
most of the page's paragraph text, the engine is given a copy of that
container alone (in a fresh html/body shell) instead of the page: the same
content from a fraction of the elements (on the 150 KB news page of
scripts/bench_article.py the engine's fast path takes ~3 ms instead of
~15). The metadata, dates, language and kind are still read from the whole
page (fields.py); the worker's document is not changed.

The guard, measured on the real pages of scripts/bench_article_quality.py
(docs/BENCHMARKS.md, "Articles: the engine on the page's focus"):

* the container holds at least FOCUS_SHARE of the text of the page's `<p>`
  elements: a page of `<article>` teasers (each a small share), an
  `<article>` holding only the headline, or a story whose paragraphs sit
  outside its `<article>` keep the whole page;
* and at least FOCUS_MIN_CHARS of it: on a page with almost no `<p>` text
  the shares say nothing, and the engine reads its divs on the whole page;
* of the containers that pass, the innermost is taken (a `<main>` holding
  an `<article>` and its comments gives the `<article>`).
"""

from __future__ import annotations

from copy import deepcopy

import lxml.html
from lxml import etree

# The containers a page's markup names as its main content.
_CONTAINERS = etree.XPath(
    "//body//*[self::article or self::main or @itemprop='articleBody' or @role='main']"
)
# A paragraph's text.
_PARAGRAPH_TEXT = etree.XPath(".//p//text()", smart_strings=False)

FOCUS_SHARE = 0.6  # of the page's paragraph text, at least, in the container (> 0.5)
FOCUS_MIN_CHARS = 250  # of paragraph text in the container, at least


def _paragraph_chars(element: etree._Element) -> int:
    return sum(map(len, _PARAGRAPH_TEXT(element)))


def page_focus(doc: lxml.html.HtmlElement) -> etree._Element | None:
    """The container holding the page's story, or None (the whole page is needed)."""
    containers = _CONTAINERS(doc)
    if not containers:
        return None
    needed = max(FOCUS_MIN_CHARS, FOCUS_SHARE * _paragraph_chars(doc))
    holding = [el for el in containers if _paragraph_chars(el) >= needed]
    # Each holds most of the text, so they nest one in the other; in document
    # order (an ancestor before its descendants) the last is the innermost.
    return holding[-1] if holding else None


def focused_page(container: etree._Element) -> lxml.html.HtmlElement:
    """A copy of the container in a page of its own (html, body)."""
    page = lxml.html.Element("html")
    body = etree.SubElement(page, "body")
    story = deepcopy(container)
    story.tail = None  # the text after the container is not in it
    body.append(story)
    return page
