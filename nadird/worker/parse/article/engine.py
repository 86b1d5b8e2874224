"""The extraction engine: trafilatura's main content and metadata of a page.

One run gives both the content tree (whose plain text and markdown the
fields hold) and the metadata; the options are the ones the article fields
need, chosen once here:

* `include_comments=False`: readers' comments are not the article;
* formatting, links and tables kept: the markdown shows them (the plain
  text drops them again, plain.py);
* images only when the job asks (`article: {images: true}`): with them the
  engine also keeps image captions, lists of image teasers, and on some
  pages loses a paragraph beside a figure, so the text scores lower (mean
  shingle F1 0.878 against 0.881 without, docs/BENCHMARKS.md);
* `deduplicate=False`: the engine's cache of seen paragraphs would make a
  page's text depend on the pages a worker saw before it;
* `favor_precision`: on the real pages of scripts/bench_article_quality.py
  it scores best of the engine's three settings (docs/BENCHMARKS.md).

The engine edits the tree it is given, so it gets a copy: the worker still
reads the links and the signature from the document afterwards. It is not
told the page's URL: it would resolve every link of the page with it (a
third of its time on a page of 5,000 links, docs/BENCHMARKS.md), where
only the content's links and images matter; those are resolved here.
"""

from __future__ import annotations

import contextlib
import copy
from typing import TYPE_CHECKING
from urllib.parse import urljoin

import lxml.html
from lxml import etree

from nadird.worker.parse.base import base_url

if TYPE_CHECKING:
    from trafilatura.settings import Document

# Where the engine's content tree holds URLs.
_URL_ATTRS = (("ref", "target"), ("graphic", "src"))


def load_engine() -> None:
    """Import the engine now (once per process), outside any page's budget."""
    import trafilatura  # noqa: F401


def run_engine(doc: lxml.html.HtmlElement, url: str, images: bool = False) -> Document | None:
    """The engine's document for the page; None when it found no content.
    With `images`, the content keeps its images (article.images)."""
    # Imported on first use: it takes 0.2-0.4 s, which no job without
    # `article:` (and no command that extracts nothing) should wait for.
    from trafilatura import bare_extraction
    from trafilatura.settings import Document

    found = bare_extraction(
        copy.deepcopy(doc),
        url=None,
        include_comments=False,
        include_formatting=True,
        include_links=True,
        include_images=images,
        include_tables=True,
        deduplicate=False,
        favor_precision=True,
        with_metadata=True,
    )
    if not isinstance(found, Document):
        return None
    if found.body is not None:
        _resolve(found.body, base_url(doc, url))
    return found


def _resolve(body: etree._Element, base: str) -> None:
    """The content's link targets and image sources as absolute URLs."""
    for tag, attr in _URL_ATTRS:
        for element in body.iter(tag):
            value = (element.get(attr) or "").strip()
            if value:
                with contextlib.suppress(ValueError):  # a malformed URL stays as written
                    element.set(attr, urljoin(base, value))


def markdown_of(found: Document) -> str:
    """The content as markdown: headings, lists, links, tables and images kept."""
    from trafilatura.xml import xmltotxt

    return xmltotxt(found.body, True).strip() if found.body is not None else ""
