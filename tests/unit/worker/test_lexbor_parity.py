"""Lexbor against lxml: the same page gives the same links, canonical URL,
robots directives and CSS/regex field values through both parsers, or one of
the differences the manual lists (docs/jobs/parsers.md), each pinned here."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.hostile import Page, html_page
from support.hostile_helpers import fetch_config, fetcher, hostile_web, url

from nadird.common.urls import fingerprint
from nadird.job.parser_choice import PageParser, page_parser
from nadird.job.spec import Job, Selector
from nadird.testing.graph import SiteGraph
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.follow.find import extract_links
from nadird.worker.pages import PageProcessor, PageTask
from nadird.worker.parse.directives import canonical_link, robots_directives
from nadird.worker.parse.fields import extract_fields
from nadird.worker.parse.page import parse_page
from nadird.worker.parse.parser import decode_html

PAGE = "http://a.test/dir/page.html"
FIELDS = {
    "title": [Selector(css="title")],
    "h1": [Selector(css="h1, .headertitle")],
    "hrefs": [Selector(css="a", attr="href", multiple=True)],
    "paras": [Selector(css="p", multiple=True)],
    "sku": [Selector(css="meta[name=sku]", attr="content"), Selector(regex=r"sku=(\w+)")],
}
ARTICLES = Path(__file__).parents[2] / "support" / "articles"


def read(body: bytes, parser: PageParser, charset: str | None = None) -> dict[str, Any] | None:
    """What the worker takes from a page through `parser` (None: unparsable)."""
    text = decode_html(body, charset)
    doc = parse_page(text, PAGE, parser)
    if doc is None:
        return None
    return {
        "links": extract_links(doc, PAGE, respect_nofollow=True),
        "all_links": extract_links(doc, PAGE),
        "canonical": canonical_link(doc, PAGE),
        "robots": robots_directives(doc, None, "nadird"),
        "fields": extract_fields(doc, text, FIELDS),
    }


def assert_alike(body: bytes, charset: str | None = None) -> dict[str, Any] | None:
    found = read(body, "lxml", charset)
    assert read(body, "lexbor", charset) == found
    return found


def doxygen_page(rng: random.Random) -> bytes:
    """The shape of a Doxygen API page: a nav path, a member table of a few
    hundred links (most repeated), a class diagram's <area> map."""
    names = [f"class{rng.randrange(400)}" for _ in range(rng.randrange(50, 300))]
    rows = "".join(
        f'<tr class="memitem:"><td class="memItemLeft" align="right">void&#160;</td>'
        f'<td class="memItemRight"><a class="el" href="{n}.html#a{i}">{n}</a> ()</td></tr>'
        for i, n in enumerate(names)
    )
    areas = "".join(
        f'<area shape="rect" href="{n}.html" title="{n}" alt="" coords="{i},0,{i + 9},9"/>'
        for i, n in enumerate(names[:40])
    )
    return (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
        '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head>'
        '<meta http-equiv="Content-Type" content="text/xhtml;charset=UTF-8"/>'
        '<title>lib: Widget Class Reference</title><link href="tabs.css" rel="stylesheet"/>'
        '</head><body><div id="nav-path" class="navpath"><ul>'
        '<li class="navelem"><a class="el" href="namespacelib.html">lib</a></li></ul></div>'
        '<div class="header"><div class="headertitle"><div class="title">Widget Class'
        f'</div></div></div><div class="contents"><table class="memberdecls">{rows}</table>'
        f'<div class="dynsection"><img src="w.png" usemap="#w_map" alt=""/>'
        f'<map name="w_map" id="w_map">{areas}</map></div>'
        '<p>See <a href="http://other.example/">elsewhere</a> and '
        '<a href="../index.html">the index</a>.</p></div></body></html>'
    ).encode()


def test_doxygen_shaped_pages_read_alike() -> None:
    rng = random.Random(7)
    for _ in range(20):
        found = assert_alike(doxygen_page(rng))
        assert found is not None and len(found["links"]) > 40


def test_the_synthetic_web_reads_alike() -> None:
    graph = SiteGraph(hosts=3, pages=60, seed=3, filler_kb=2)
    pages = 0
    for page_url in graph.all_pages():
        parts = urlsplit(page_url)
        html = graph.html(parts.hostname or "", parts.path)
        if html is not None:
            pages += 1
            assert_alike(html.encode())
    assert pages > 100


@pytest.mark.parametrize("name", sorted(p.name for p in ARTICLES.glob("*.html")))
def test_the_sample_article_pages_read_alike(name: str) -> None:
    assert assert_alike((ARTICLES / name).read_bytes()) is not None


GBK_PAGE = (
    "<html><head><meta charset=gbk><title>中文标题</title></head>"
    "<body><h1>你好</h1><a href='/路'>x</a>"
)

HOSTILE = {
    "unclosed tags": b"<html><head><title>t<body><p>one<p>two<a href=/a>x<a href=b><div><a href=c>",
    "nested forms": b"<form><a href=/f1></a><form><a href=/f2>x</a></form></form><p>after",
    "malformed": b"<html><head><title>bad</title><body><<a href='/x'>>\x00\x00<p<div></td></html",
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR<a href=/x>",
    "a NUL after the sniffed part": b"<a href=/a>" + b"x" * 2000 + b"\x00<a href=/b>",
    "foster-parented link": b"<table><a href=/fost>f</a><tr><td><a href=/cell>c</a></table>",
    "misnested": b"<a href=/1>one<a href=/2>two</a></a><b><i>bold</b>it</i><p>x",
    "noscript in head": b"<head><noscript><img src=x></noscript><link rel=canonical href=/c>"
    b"<meta name=robots content=nofollow></head><a href=/x>x</a>",
    "base in body": b"<body><a href=rel>r</a><base href=http://b.test/q/><a href=rel2>r</a>",
    "markup in title": b"<title>A <b>bold</b> &amp; title</title><h1> a\n b </h1>",
    "links in comments, scripts, textareas": b"<!-- <a href=/c> --><script>'<a href=/s>'</script>"
    b"<textarea><a href=/t></textarea><a href=/real>",
    "svg links": b"<svg><a href=/svg>s</a><a xlink:href=/xl>x</a></svg>",
    "upper case": b"<A HREF=/UP REL=NOFOLLOW>u</A><AREA HREF=/ar><META NAME=ROBOTS CONTENT=NONE>",
    "repeated attribute": b"<a href=/first href=/second>d</a>",
    "empty canonical first": b"<link rel='Canonical' href=''><link rel=canonical href=/later>",
    "entities": b"<a href='/a?x=1&amp;y=2&copy=3'>e</a><title>&nbsp;x&nbsp;</title><p>sku=AB1</p>",
    "text only": b"hello",
    "cdata": b"<![CDATA[<a href=/cd>]]><a href=/x>",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_markup_reads_alike(name: str) -> None:
    assert_alike(HOSTILE[name])


@pytest.mark.parametrize(
    ("body", "charset"),
    [
        (GBK_PAGE.encode("gbk"), None),  # <meta charset> names it
        (GBK_PAGE.replace("<meta charset=gbk>", "").encode("gbk"), "gbk"),  # the header does
        ("<title>Café crème</title><h1>é</h1>".encode("cp1252"), "utf-8"),  # a wrong header
        ("\ufeff<title>Z</title><a href=/u16>".encode("utf-16-le"), None),  # a BOM
    ],
)
def test_encodings_are_decided_once_for_both(body: bytes, charset: str | None) -> None:
    found = assert_alike(body, charset)
    assert found is not None and found["fields"]["title"]


def test_binary_bodies_are_unparsable_through_both() -> None:
    assert read(HOSTILE["binary"], "lexbor") is None and read(b"  \n", "lexbor") is None


def links_of(found: dict[str, Any] | None) -> list[str]:
    assert found is not None
    links: list[str] = found["links"]
    return links


def test_documented_differences_deep_nesting() -> None:
    # libxml2 stops building the tree at 256 levels and loses what follows;
    # a browser, and Lexbor, do not.
    body = b"<div>" * 10_000 + b"<a href=/deep>d</a>" + b"</div>" * 10_000 + b"<a href=/after>"
    assert links_of(read(body, "lxml")) == []
    assert links_of(read(body, "lexbor")) == ["http://a.test/deep", "http://a.test/after"]


def test_documented_differences_html5_tree() -> None:
    # <template> content is inert (no link a user can follow).
    template = b"<template><a href=/t>t</a></template><a href=/o>o</a>"
    assert links_of(read(template, "lxml")) == ["http://a.test/t", "http://a.test/o"]
    assert links_of(read(template, "lexbor")) == ["http://a.test/o"]
    # After <frameset>, the HTML standard ignores body content.
    frames = b"<frameset><frame src=/f></frameset><a href=/nf>"
    assert links_of(read(frames, "lxml")) == ["http://a.test/nf"]
    assert links_of(read(frames, "lexbor")) == []
    # A <p> inside <h1> stays inside it, as browsers show it.
    heading = b"<h1>h<p>c</h1>"
    assert read(heading, "lxml") is not None and read(heading, "lexbor") is not None
    assert (read(heading, "lxml") or {})["fields"]["h1"] == "h"
    assert (read(heading, "lexbor") or {})["fields"]["h1"] == "hc"
    # Selectors compare some attribute values as the HTML standard says.
    button = b"<input type=Submit value=go>"
    values = {"v": [Selector(css="input[type=submit]", attr="value")]}
    assert extract_fields(parse_page(button.decode(), PAGE, "lxml"), "", values) == {"v": None}
    assert extract_fields(parse_page(button.decode(), PAGE, "lexbor"), "", values) == {"v": "go"}
    # A body of nothing but a comment is an empty page, not a parse error.
    assert read(b"<!-- nothing -->", "lxml") is None
    assert links_of(read(b"<!-- nothing -->", "lexbor")) == []


async def test_a_crawled_page_gives_the_same_result_through_both() -> None:
    """PageProcessor end to end, a real server: the job's auto choice
    (Lexbor) and the same job on lxml make the same results."""
    with hostile_web() as (web, hostile):
        host = "p.test"
        canonical = url(web, host, "/item")
        pages = {
            "/item": html_page("item", ["/a", "/b?x=1"], body="<p>sku=W42</p>"),
            "/print": html_page("print", ["/c"], head=f'<link rel="canonical" href="{canonical}">'),
            "/quiet": html_page(
                "q", ["/d"], head='<meta name="robots" content="noindex,nofollow">'
            ),
            "/partly": html_page("partly", ["/e"], rel="nofollow", body='<a href="/f">f</a>'),
        }
        for path, body in pages.items():
            hostile.add_page(host, path, Page(body))
        results: dict[str, list[object]] = {}
        cfg = fetch_config()
        for parser in ("auto", "lxml"):
            job = Job(fields={k: v for k, v in FIELDS.items() if k != "h1"}, parser=parser)  # type: ignore[arg-type]
            async with fetcher() as client:
                processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
                for path in pages:
                    task = PageTask(url(web, host, path), fingerprint(url(web, host, path)), 0)
                    result = (await processor.process(task)).result
                    assert result is not None and result.error is None
                    seen = (result.data, result.links, result.canonical, result.body is None)
                    results.setdefault(path, []).append(seen)
    assert page_parser(Job(fields=FIELDS)) == "lexbor"
    for path, (lexbor, lxml) in results.items():
        assert lexbor == lxml, path
    item_data = results["/item"][0][0]
    assert isinstance(item_data, dict) and item_data["sku"] == "W42"
    assert results["/quiet"][0][1:] == ([], None, True)  # noindex, nofollow
    assert results["/partly"][0][1] == [url(web, host, "/f")]
