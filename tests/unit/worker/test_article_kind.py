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
