"""The kind of a page and its plain text on the shapes real pages take:
a specification in one preformatted block, a declared article full of
links, a login box beside a declared article, a list of headed items."""

from __future__ import annotations

from typing import Any

from nadird.items.processors import Context
from nadird.job.spec import Job
from nadird.worker.parse.item import extract_item
from nadird.worker.parse.parser import parse_text

URL = "https://docs.test/page"
SENTENCE = "The protocol keeps one connection per peer and closes it after a quiet minute. "


def item_of(html: str) -> dict[str, Any]:
    found = extract_item(parse_text(html, URL), html, Job(article=True), (), Context(URL, 0.0))
    assert isinstance(found, tuple)
    return found[1]


def page(head: str, body: str) -> str:
    return f"<html lang='en'><head><title>T</title>{head}</head><body>{body}</body></html>"


def test_a_long_preformatted_document_is_an_article() -> None:
    lines = "\n".join(f"   {i}. {SENTENCE}" for i in range(60))
    item = item_of(page("", f"<main><pre>{lines}</pre></main>"))
    assert item["kind"] == "article"
    assert "closes it after a quiet minute" in item["text"]


def _link_heavy_story() -> str:
    links = " ".join(f"<a href='/t/{i}'>topic number {i}</a>" for i in range(30))
    return f"<article><p>{SENTENCE * 3}</p><p>{links}</p></article>"


def test_a_declared_article_full_of_links_is_an_article_not_a_hub() -> None:
    declared = "<meta property='og:type' content='article'>"
    assert item_of(page(declared, _link_heavy_story()))["kind"] == "article"
    assert item_of(page("", _link_heavy_story()))["kind"] == "hub"


def test_a_login_box_beside_a_declared_article_s_text_is_not_a_wall() -> None:
    declared = "<meta property='og:type' content='article'>"
    login = "<form><input type='password' name='p'></form>"
    story = f"<article><p>{SENTENCE * 8}</p><p>{SENTENCE * 7}</p></article>"
    assert item_of(page(declared, login + story))["kind"] == "article"
    teaser = f"<article><p>{SENTENCE * 2}</p></article>"
    assert item_of(page(declared, login + teaser))["kind"] == "login"


def test_a_list_item_s_heading_and_paragraph_are_not_run_together() -> None:
    items = "".join(
        f"<li><h2>Tool {i}</h2><p>{SENTENCE * 2}</p><a href='/m/{i}'>More</a></li>"
        for i in range(4)
    )
    item = item_of(page("", f"<main><p>{SENTENCE * 3}</p><ul>{items}</ul></main>"))
    assert "Tool 1 The protocol" in item["text"]
    assert "Tool 1The" not in item["text"]


def test_the_extraction_leaves_the_worker_s_document_as_it_was() -> None:
    # The worker reads links and the signature from the same document after
    # the article fields: the engine must work on a copy of its own.
    from lxml import etree

    html = page("<meta property='og:type' content='article'>", f"<nav><a href='/x'>X</a></nav>"
                f"<article><p>{SENTENCE * 4}</p><p>{SENTENCE * 4}</p></article>")  # fmt: skip
    doc = parse_text(html, URL)
    before = etree.tostring(doc)
    extract_item(doc, html, Job(article=True), (), Context(URL, 0.0))
    assert etree.tostring(doc) == before


def test_a_short_post_that_states_its_date_is_an_article_and_an_undated_one_is_not() -> None:
    post = f"<main><article><p>{SENTENCE * 4}</p></article></main>"
    dated = "<meta property='article:published_time' content='2024-05-31T10:00:00+02:00'>"
    item = item_of(page(dated, post))
    assert item["kind"] == "article"
    assert item["published"] == "2024-05-31T10:00:00+02:00"
    assert "closes it after a quiet minute" in item["text"]
    assert item_of(page("", post))["kind"] == "other"  # a contact or service page


def test_the_text_has_no_soft_hyphens_and_is_in_composed_unicode() -> None:
    # "Während" written with a decomposed a-umlaut and hyphenation hints.
    word = "Wa\u0308h\xadrend"
    paragraphs = "".join(f"<p>Part {i}. {SENTENCE * 2}</p>" for i in range(3))
    body = f"<main><article><p>{word} {SENTENCE * 2}</p>{paragraphs}</article></main>"
    item = item_of(page("", body))
    assert item["kind"] == "article"
    assert item["text"].startswith("Während The protocol")
    assert "\xad" not in item["text"] and "\xad" not in item["markdown"]
    assert "Während" in item["markdown"]


def _news_item(date_line: str, head: str = "") -> str:
    headline = "Council approves the new tram line"
    body = (
        f"<nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
        f"<main><h1>{headline}</h1><div class='byline'>{date_line}</div>"
        f"<div class='text'>{SENTENCE * 4}</div></main>"
    )
    return (
        f"<html><head><title>{headline} - City News</title>{head}</head><body>{body}</body></html>"
    )


def test_a_short_item_showing_its_date_beside_its_headline_is_an_article() -> None:
    # No type, no date in the metadata or the URL: the line under the
    # headline is what tells a reader this is a news item.
    for shown in ("24. März 2004, 19:49 | editor", "14.06.2019 (ch)", "Thursday, July 28, 2011"):
        item = item_of(_news_item(shown))
        assert item["kind"] == "article", shown
        assert "closes it after a quiet minute" in item["text"]
    assert item_of(_news_item("by the editor"))["kind"] == "other"  # no date, no article
    assert item_of(_news_item("Call 12.06 to book"))["kind"] == "other"  # no whole date


def test_a_date_beside_the_headline_leaves_products_walls_and_hubs_as_they_are() -> None:
    product = item_of(_news_item("14.06.2019", "<meta property='og:type' content='product'>"))
    assert product["kind"] == "product"
    walled = _news_item("14.06.2019").replace(
        "<main>", "<form><input type='password'></form><main>"
    )
    assert item_of(walled)["kind"] == "login"
    teasers = "".join(f"<p><a href='/news/{i}'>{SENTENCE}</a></p>" for i in range(6))
    listing = _news_item("14.06.2019").replace(f"<div class='text'>{SENTENCE * 4}</div>", teasers)
    assert item_of(listing)["kind"] == "hub"


def test_a_link_to_a_picture_is_no_teaser() -> None:
    # A picture opening large, its paragraph beside it: the paragraph is no
    # link to another page, whatever tree the engine builds of it.
    def story(target: str) -> str:
        picture = f"<a class='gallery' href='{target}'><img src='/pics/small.jpg' alt=''></a>"
        return _news_item("14.06.2019").replace(
            f"<div class='text'>{SENTENCE * 4}</div>", f"<p>{picture}{SENTENCE * 4}</p>"
        )

    assert item_of(story("https://images.test/pics/large.jpg"))["kind"] == "article"
    assert item_of(story("/news/another-story"))["kind"] == "hub"
