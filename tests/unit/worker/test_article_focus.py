"""The page's focus: the engine is given the one container holding the story,
and a page of teasers, a headline-only `<article>` or a page with little
paragraph text keeps the whole page."""

from __future__ import annotations

import time

from lxml import etree
from support.articles import PAGES, html_of

from nadird.items.processors import Context
from nadird.job.spec import Job
from nadird.worker.parse.article import engine
from nadird.worker.parse.article.focus import engine_page, page_focus
from nadird.worker.parse.item import extract_item
from nadird.worker.parse.parser import parse_text

URL = "https://news.test/2026/03/14/story"
SENTENCE = "The ferry kept running through the storm while the bridge stayed closed. "
STORY = "".join(f"<p>{SENTENCE * 3} (part {i})</p>" for i in range(6))
NAV = "<nav><ul>" + "".join(f"<li><a href='/s/{i}'>Section {i}</a></li>" for i in range(20))
NAV += "</ul></nav>"
COMMENTS = "<section class='comments'><p>reader one: nice</p><p>reader two: no</p></section>"


def page(body: str, head: str = "") -> str:
    return f"<html lang='en'><head><title>T</title>{head}</head><body>{body}</body></html>"


def focus_of(html: str) -> etree._Element | None:
    return page_focus(parse_text(html, URL))


def test_a_page_with_one_article_container_is_focused_on_it() -> None:
    found = focus_of(page(f"{NAV}<main><article id='story'>{STORY}</article>{COMMENTS}</main>"))
    assert found is not None and found.get("id") == "story"  # the innermost, not <main>


def test_an_article_body_marked_inside_the_article_is_the_focus() -> None:
    body = f"<article><h1>Headline</h1><div itemprop='articleBody'>{STORY}</div></article>"
    found = focus_of(page(NAV + body))
    assert found is not None and found.get("itemprop") == "articleBody"


def test_a_page_of_article_teasers_is_not_focused() -> None:
    teasers = "".join(
        f"<article><h2><a href='/a/{i}'>Story {i}</a></h2><p>{SENTENCE}</p></article>"
        for i in range(8)
    )
    assert focus_of(page(f"{NAV}<main>{teasers}</main>")) is not None  # <main> holds them all
    assert focus_of(page(NAV + teasers)) is None  # no teaser holds most of the text


def test_an_article_holding_only_the_headline_is_not_focused() -> None:
    html = page(f"{NAV}<article><h1>Headline</h1></article><div class='body'>{STORY}</div>")
    assert focus_of(html) is None


def test_a_page_with_little_paragraph_text_is_not_focused() -> None:
    assert focus_of(page(f"<article><p>{SENTENCE}</p></article>")) is None


def test_the_engine_s_page_holds_the_story_alone_and_the_page_s_json_ld() -> None:
    ld = '<script type=\'application/ld+json\'>{"@type": "NewsArticle"}</script>'
    body = f"{NAV}<article><p>{SENTENCE * 2}</p><script>var x = 1;</script>{STORY}"
    body += "<form><p>keep me</p></form></article>after the article"
    given = engine_page(parse_text(page(body, head=ld), URL), images=False)
    text = etree.tostring(given, encoding="unicode")
    assert "part 5" in text and "keep me" in text  # forms are the engine's to judge
    assert "Section 1" not in text and "after the article" not in text
    assert "var x" not in text  # deleted by the engine anyway: stripped before it
    assert "NewsArticle" in text  # where the engine looks for a forum thread


def test_an_unfocused_page_is_given_whole_without_what_the_engine_deletes_first() -> None:
    doc = parse_text(page(f"{NAV}<div>{STORY}</div><footer>© Ledger</footer>"), URL)
    given = etree.tostring(engine_page(doc, images=False), encoding="unicode")
    assert "part 5" in given and "Section 1" not in given and "Ledger" not in given


def test_images_keep_their_pictures_for_the_engine() -> None:
    picture = "<picture><source srcset='/a.webp'><img src='/a.jpg'></picture>"
    doc = parse_text(page(f"<article>{picture}{STORY}</article>"), URL)
    assert "a.webp" in etree.tostring(engine_page(doc, images=True), encoding="unicode")
    assert "a.webp" not in etree.tostring(engine_page(doc, images=False), encoding="unicode")


def test_the_focus_gives_the_engine_s_text_of_the_whole_page_on_the_fixtures() -> None:
    for fixture in PAGES:
        doc = parse_text(html_of(fixture.file), "https://news.test" + fixture.path)
        whole = engine._content(doc, images=False, fast=True)
        focused = engine.run_engine(doc, "https://news.test" + fixture.path)
        assert whole is not None and focused is not None
        assert engine.text_of_content(focused) == engine.text_of_content(whole), fixture.file


def test_the_worker_s_document_is_left_as_it_was_with_and_without_a_focus() -> None:
    for body in (f"{NAV}<article>{STORY}</article>", f"{NAV}<div>{STORY}</div><footer>F</footer>"):
        html = page(body)
        doc = parse_text(html, URL)
        before = etree.tostring(doc)
        extract_item(doc, html, Job(article=True), (), Context(URL, time.time()))
        assert etree.tostring(doc) == before
