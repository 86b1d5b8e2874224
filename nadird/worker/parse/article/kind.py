"""Whether a page is an article, and if not what it is.

What a page declares about itself (its JSON-LD @type, og:type) counts
first, what its extracted content looks like second:

* "login": a password field, and not an article's worth of text beside it
  (a login or paywall page; an article with a login box in its header is
  still an article);
* "product": a schema.org Product, or og:type product;
* "hub": a collection, list or search page by its type, or content that is
  mostly links (teasers of other pages; a link to a picture is none) on a
  page that does not declare itself an article (an article's content may
  carry many links: its own word is believed first);
* "article": an Article type or og:type article with some text, a page
  stating its publication date with as much text (a short news item or blog
  post that declares nothing; the date in its metadata, its URL or beside
  its headline, byline.py), or prose whatever it declares: enough
  paragraphs of it, or a long text with few links (a specification or a
  transcript set in one preformatted block);
* "other": anything else (a contact page, a gallery, an empty shell).

A page with more links than any article has (`LIST_LINKS`: a site's table of
contents, an index of every name) is a hub before the engine runs: on such
pages the engine took seconds and a hundred megabytes of memory to find the
same answer, or was given up at its budget.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

import lxml.html
from lxml import etree

from nadird.worker.parse.article.byline import shows_date
from nadird.worker.parse.article.plain import words

ARTICLE, HUB, PRODUCT, LOGIN, OTHER = "article", "hub", "product", "login", "other"

ARTICLE_TYPES = frozenset(
    {
        "Article", "NewsArticle", "BlogPosting", "Report", "ScholarlyArticle", "TechArticle",
        "OpinionNewsArticle", "ReportageNewsArticle", "AnalysisNewsArticle",
        "BackgroundNewsArticle", "ReviewNewsArticle", "LiveBlogPosting", "SocialMediaPosting",
        "Recipe", "HowTo",
    }
)  # fmt: skip
_HUB_TYPES = frozenset({"CollectionPage", "ItemList", "SearchResultsPage", "Blog"})
_PRODUCT_TYPES = frozenset({"Product", "ProductGroup", "IndividualProduct"})
# A paragraph this long is prose, not a caption or a teaser line.
PROSE_CHARS = 120
# Chinese, Japanese and Korean say in one character what takes about three
# in alphabets, so their characters count this much toward PROSE_CHARS.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
CJK_WEIGHT = 3
# Paragraphs of prose that make an article whatever the page declares.
PROSE_PARAGRAPHS = 3
# Text an article declared as one, or a dated page, must have (a teaser
# behind a wall has less).
DECLARED_MIN_CHARS = 250
# Content whose text is more than this share link text lists other pages.
HUB_LINK_SHARE = 0.4
# Links to files with these endings show a picture, they lead to no page.
_PICTURE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif", ".svg")
# Content this long (in alphabet characters) with few links is prose
# however it is split into paragraphs.
LONG_TEXT_CHARS = 2000
# A page declaring an article with a password field and this much text is
# an article with a login box beside it (a wall's teaser is a paragraph or two).
WALLED_TEASER_CHARS = 1000


# More links than this and the page lists other pages (the real articles of
# scripts/bench_article_quality.py have at most ~530 links, a 150 KB news page
# with a mega menu and promotion boxes ~5,000; the tables of contents and
# indexes of the Python documentation 14,000 to 17,000).
LIST_LINKS = 10_000
_LINK_COUNT = etree.XPath("count(//a)")


def is_link_list(doc: lxml.html.HtmlElement) -> bool:
    """Whether the page has more links than an article (~1 ms for 10,000)."""
    count = _LINK_COUNT(doc)
    assert isinstance(count, float)  # an XPath count() gives a float
    return count > LIST_LINKS


def type_names(types: Iterable[object]) -> set[str]:
    """The schema.org names of JSON-LD @type values ("schema:Article" is "Article")."""
    names: set[str] = set()
    for declared in types:
        for name in declared if isinstance(declared, list) else [declared]:
            if isinstance(name, str):
                names.add(name.rsplit("/", 1)[-1].rsplit(":", 1)[-1])
    return names


def _og_type(doc: lxml.html.HtmlElement) -> str:
    for meta in doc.iter("meta"):
        if (meta.get("property") or meta.get("name") or "").strip().lower() == "og:type":
            return (meta.get("content") or "").strip().lower()
    return ""


def _has_password(doc: lxml.html.HtmlElement) -> bool:
    return any((i.get("type") or "").strip().lower() == "password" for i in doc.iter("input"))


def _length(text: str) -> int:
    """The length of a text in alphabet characters (CJK ones weigh more)."""
    return len(text) + (CJK_WEIGHT - 1) * len(_CJK.findall(text))


def _to_page(ref: etree._Element) -> bool:
    """Whether a link leads to another page (a link to a picture shows it large:
    no teaser, and the engine may hang the text beside the picture on it)."""
    path = urlsplit(ref.get("target") or "").path.lower()
    return not path.endswith(_PICTURE_SUFFIXES)


def _prose(body: etree._Element | None) -> tuple[int, int, float]:
    """(paragraphs of prose, characters, share of link text) of the content tree."""
    if body is None:
        return 0, 0, 0.0
    paragraphs = sum(1 for p in body.iter("p") if _length(words(p)) >= PROSE_CHARS)
    chars = _length(words(body))
    linked = sum(len(words(ref)) for ref in body.iter("ref") if _to_page(ref))
    return paragraphs, chars, linked / chars if chars else 0.0


def page_kind(
    doc: lxml.html.HtmlElement,
    ld_types: Iterable[object],
    body: etree._Element | None,
    dated: bool = False,
) -> str:
    """The kind of the page (see the module doc); `ld_types` are its JSON-LD
    @type values, `body` the engine's content tree (None: it found none),
    `dated` whether the page states when it was published."""
    declared, og = type_names(ld_types), _og_type(doc)
    says_article = bool(declared & ARTICLE_TYPES) or og == "article"
    paragraphs, chars, link_share = _prose(body)
    few_links = link_share < HUB_LINK_SHARE
    prose = few_links and (paragraphs >= PROSE_PARAGRAPHS or chars >= LONG_TEXT_CHARS)
    if _has_password(doc) and not prose and not (says_article and chars >= WALLED_TEASER_CHARS):
        return LOGIN
    if declared & _PRODUCT_TYPES or og == "product":
        return PRODUCT
    if declared & _HUB_TYPES or (chars and not few_links and not says_article):
        return HUB
    if prose or (chars >= DECLARED_MIN_CHARS and _stated(doc, says_article, dated, few_links)):
        return ARTICLE
    return OTHER


def _stated(doc: lxml.html.HtmlElement, says_article: bool, dated: bool, few_links: bool) -> bool:
    """Whether the page says it is an article: by its type, or by its date in
    the metadata or beside its headline (a dated list of links is no post)."""
    return says_article or (few_links and (dated or shows_date(doc)))
