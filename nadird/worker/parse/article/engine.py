"""The extraction engine: trafilatura's main content of a page.

It gives the content tree whose plain text and markdown the fields hold
(the metadata is read apart, metadata.py). The options are the ones the
article fields need, chosen once here by measurement on the real pages of
scripts/bench_article_quality.py (docs/BENCHMARKS.md):

* `include_comments=False`: readers' comments are not the article;
* formatting, links and tables kept: the markdown shows them (the plain
  text drops them again, plain.py);
* images only when the job asks (`article: {images: true}`): with them the
  engine also keeps image captions, lists of image teasers, and on some
  pages loses a paragraph beside a figure, so the text scores lower;
* `deduplicate=False`: the engine's cache of seen paragraphs would make a
  page's text depend on the pages a worker saw before it;
* `favor_precision`: the best of the engine's three settings on those pages,
  on the page's focus too (the default finds more on a few pages there, but
  lets boilerplate in and loses most of another page's story);
* the fast path first (`fast=True`: the engine's own extractor without its
  comparison against two other algorithms), and the full path only when
  the fast one found less than an article's worth of text: on the real
  pages the fast path gave the same text wherever it found any, for half
  the time;
* the fast path on the page's focus (focus.py: the one container holding
  the story, when the page has one), the full path on the whole page;
* and when neither path found any content, once more without formatting and
  links: on some pages (a WordPress theme among the real ones) keeping them
  makes the engine reject the whole content, which it finds without them;
  the markdown then has the text without its links and emphasis.

The engine is given copies (focus.py's for the fast path; it copies the
whole page itself on the full path) before it edits them (the worker
still reads the links and the signature from the document afterwards;
tests/unit/worker/test_article_focus.py checks the document is left as
it was). It is not told the page's URL: it would resolve every link of the
page with it, where only the content's links matter; those are resolved here.
"""

from __future__ import annotations

import contextlib
from urllib.parse import urljoin

import lxml.html
from lxml import etree

from nadird.worker.parse.article.focus import engine_page
from nadird.worker.parse.article.plain import clean
from nadird.worker.parse.base import base_url

# Where the engine's content tree holds URLs.
_URL_ATTRS = (("ref", "target"), ("graphic", "src"))


def load_engine() -> None:
    """Import the engine now (once per process), outside any page's budget."""
    import trafilatura  # noqa: F401


# The fast path's content shorter than this (nothing, or a teaser) is
# extracted again on the full path.
FULL_PATH_BELOW_CHARS = 500


def run_engine(doc: lxml.html.HtmlElement, url: str, images: bool = False) -> etree._Element | None:
    """The page's main content tree; None when the engine found none.
    With `images`, the content keeps its images (article.images)."""
    body = _content(engine_page(doc, images), images, fast=True)
    if body is None or len(text_of_content(body)) < FULL_PATH_BELOW_CHARS:
        body = _content(doc, images, fast=False)
    if body is None or not text_of_content(body).strip():
        body = _content(doc, images, fast=False, markup=False)
    if body is not None:
        _resolve(body, base_url(doc, url))
    return body


def _content(
    doc: lxml.html.HtmlElement, images: bool, fast: bool, markup: bool = True
) -> etree._Element | None:
    # Imported on first use: it takes 0.2-0.4 s, which no job without
    # `article:` (and no command that extracts nothing) should wait for.
    from trafilatura import bare_extraction
    from trafilatura.settings import Document

    found = bare_extraction(
        doc,
        url=None,
        fast=fast,
        include_comments=False,
        include_formatting=markup,
        include_links=markup,
        include_images=images,
        include_tables=True,
        deduplicate=False,
        favor_precision=True,
        with_metadata=False,
        # Not "python": with it the engine also renders the content as text,
        # which the fields do not use (markdown_of renders it once, after
        # the links are resolved); with "xml" it returns the same tree, unrendered.
        output_format="xml",
    )
    return found.body if isinstance(found, Document) else None


def text_of_content(body: etree._Element) -> str:
    return str(etree.tostring(body, method="text", encoding="unicode"))


def _resolve(body: etree._Element, base: str) -> None:
    """The content's link targets and image sources as absolute URLs."""
    for tag, attr in _URL_ATTRS:
        for element in body.iter(tag):
            value = (element.get(attr) or "").strip()
            if value:
                with contextlib.suppress(ValueError):  # a malformed URL stays as written
                    element.set(attr, urljoin(base, value))


def markdown_of(body: etree._Element | None) -> str:
    """The content as markdown: headings, lists, links and tables kept (images too
    when the content has them)."""
    from trafilatura.xml import xmltotxt

    if body is None:
        return ""
    return clean(str(xmltotxt(body, True))).strip()
