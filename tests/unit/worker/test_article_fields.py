"""`article: true`: the generic fields of article pages, and none of an
article's text on pages that are something else."""

from __future__ import annotations

import contextlib
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from support.articles import ARTICLE_TEXT, BAD_PAGES, NOT_TEXT, PAGES, PREFIX, html_of

from nadird.items.processors import Context
from nadird.items.schema import compile_rules
from nadird.job.article import ARTICLE_FIELDS, ArticleSpec
from nadird.job.spec import FieldSpec, Job, Selector
from nadird.worker.parse.article import fields as article_module
from nadird.worker.parse.article.fields import ARTICLE_ERROR, article_fields
from nadird.worker.parse.article.kind import LIST_LINKS
from nadird.worker.parse.item import extract_item
from nadird.worker.parse.parser import decode_html, parse_html, parse_text

BASE = "https://news.test"


def item_of(html: str, url: str, job: Job | None = None) -> dict[str, Any]:
    """The item the worker makes of the page for `job` (article: true by default)."""
    job = job or Job(article=True)
    doc = parse_text(html, url)
    rules = compile_rules(job.schema)
    return extract_item(doc, html, job, rules, Context(url, time.time()))[1]


def page_item(file: str) -> dict[str, Any]:
    page = next(p for p in PAGES if p.file == file)
    return item_of(html_of(file), BASE + page.path)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.file)
def test_every_page_gets_every_field_and_its_kind(page: Any) -> None:
    item = page_item(page.file)
    assert list(item) == list(ARTICLE_FIELDS)
    assert item["kind"] == page.kind
    assert item["title"]
    if page.kind != "article":  # no article's text on a hub, a product or a wall
        assert item["text"] is None and item["markdown"] is None


@pytest.mark.parametrize("file", sorted(ARTICLE_TEXT))
def test_the_text_is_the_main_text_alone_in_paragraphs(file: str) -> None:
    text = page_item(file)["text"]
    for sentence in ARTICLE_TEXT[file]:
        assert sentence in text
    for boilerplate in NOT_TEXT:
        assert boilerplate not in text, boilerplate
    paragraphs = text.split("\n\n")
    assert len(paragraphs) >= 5
    assert all(p.strip() == p and p for p in paragraphs)
    assert "[" not in text and "](" not in text and "#" not in text  # no markup


def test_the_markdown_keeps_headings_lists_links_and_tables() -> None:
    markdown = page_item("news_article.html")["markdown"]
    assert markdown.startswith("# Harbour tunnel reopens after two-year repair")
    assert "\n## What changed underground\n" in markdown
    assert "- Length of lining replaced: 640 metres" in markdown
    assert "[problems found once the old lining was removed](" in markdown
    assert "| 2023 | 48,000 |" in markdown
    assert "![" not in markdown  # images only when the job asks for them
    for boilerplate in NOT_TEXT:
        assert boilerplate not in markdown


def test_images_true_keeps_the_content_s_images_in_the_markdown() -> None:
    page = next(p for p in PAGES if p.file == "news_article.html")
    job = Job(article={"images": True})
    item = item_of(html_of(page.file), BASE + page.path, job)
    assert (
        "![Cars entering the harbour tunnel at dawn](https://news.test/media/" in item["markdown"]
    )
    assert "Cars entering the harbour tunnel" not in item["text"]  # no markup in the text


def test_the_metadata_of_a_news_article() -> None:
    item = page_item("news_article.html")
    assert item["title"] == "Harbour tunnel reopens after two-year repair"
    assert item["authors"] == ["Mara Lindqvist", "Tomás Ferreira"]
    # JSON-LD is trusted over Open Graph (whose 08:30Z is the same moment).
    assert item["published"] == "2026-03-14T09:30:00+01:00"
    assert item["modified"] == "2026-03-15T17:05:00+01:00"
    assert item["description"].startswith("The harbour tunnel carries traffic again")
    assert item["image"] == "https://news.test/media/tunnel-1200.jpg"
    assert item["site_name"] == "The Coastal Ledger"
    assert item["categories"] == ["City"]
    assert item["tags"] == ["Transport", "Infrastructure"]
    assert item["language"] == "en"


def test_a_keywords_meta_tag_gives_one_tag_per_word_listed() -> None:
    sentence = "港特首就住宅违建事件道歉，并向香港民众道歉。"
    story = "".join(f"<p>{sentence * 6}</p>" for _ in range(5))
    html = (
        '<html><head><title>港特首道歉</title><meta name="keywords" '
        'content="香港, 梁振英，特首、违建; 香港, #违建">'
        f"</head><body><article><h1>港特首道歉</h1>{story}</article></body></html>"
    )
    item = item_of(html, BASE + "/2012/12/10/apology")
    assert item["kind"] == "article"
    # Each once, in the page's order: not the attribute whole, as one tag.
    assert item["tags"] == ["香港", "梁振英", "特首", "违建"]


def test_a_blog_post_with_a_wrong_language_and_only_a_time_element() -> None:
    item = page_item("blog_post.html")
    assert item["language"] == "en"  # declared lang="fr", written in English
    assert item["published"] == "2025-11-02"  # a date alone stays a date
    assert item["modified"] is None
    assert item["authors"] == ["Ines Okafor"]
    assert item["categories"] == ["Baking"]
    assert item["tags"] is None


_STORY = "".join(
    f"<p>Paragraph {i} of a story long enough to be an article, told at length.</p>"
    for i in range(12)
)


@pytest.mark.parametrize(
    ("byline", "authors"),
    [
        ('<p class="byline">Ada Quist</p>', ["Ada Quist"]),
        ('<span id="post-author">Ada Quist</span>', ["Ada Quist"]),
        ('<a rel="author" href="/who">Ada Quist</a>', ["Ada Quist"]),
        # An author link in the head, as Sphinx writes one, names nobody.
        ('<link rel="author" href="/about">', None),
    ],
)
def test_an_author_named_only_in_the_markup(byline: str, authors: list[str] | None) -> None:
    html = f"<html><head><title>A story</title>{byline}</head><body>{_STORY}</body></html>"
    if "<link" not in byline:
        html = f"<html><head><title>A story</title></head><body>{byline}{_STORY}</body></html>"
    assert item_of(html, BASE + "/story")["authors"] == authors


def test_a_page_with_more_links_than_an_article_is_a_hub_without_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_engine(*args: object) -> None:
        raise AssertionError("the engine ran on a list of links")

    links = "".join(f"<li><a href='/n/{i}'>name {i}</a></li>" for i in range(LIST_LINKS + 1))
    html = f"<html><head><title>Index</title></head><body>{_STORY}<ul>{links}</ul></body></html>"
    monkeypatch.setattr(article_module, "run_engine", no_engine)
    item = item_of(html, BASE + "/index")
    assert (item["kind"], item["title"], item["text"], item["markdown"]) == (
        "hub",
        "Index",
        None,
        None,
    )


def test_a_product_keeps_its_metadata_but_no_article_text() -> None:
    item = page_item("product.html")
    assert item["title"] == "Trailhead 45 L hiking backpack"
    # From its JSON-LD: it has no meta description.
    assert item["description"].startswith("A 45 litre backpack with an adjustable back system")
    assert item["site_name"] == "Summit Supply"
    assert item["text"] is None and item["authors"] is None and item["published"] is None


def test_the_job_s_own_fields_win_and_the_generic_ones_fill_the_rest() -> None:
    job = Job(
        article=True,
        fields={
            "title": [Selector(css="title")],
            "price": [Selector(css=".price")],
            "authors": [Selector(css=".no-such-thing", multiple=True)],
        },
        schema={"title": FieldSpec(type="string", required=True)},
    )
    item = item_of(html_of("news_article.html"), BASE + PAGES[0].path, job)
    assert item["title"] == "Harbour tunnel reopens after two-year repair | The Coastal Ledger"
    assert item["price"] is None
    assert item["authors"] == ["Mara Lindqvist", "Tomás Ferreira"]  # the job's matched nothing
    assert item["text"] and "_valid" not in item


def test_a_job_without_article_gets_no_generic_field() -> None:
    item = item_of(html_of("news_article.html"), BASE, Job(fields={"h": [Selector(css="h1")]}))
    assert item == {"h": "Harbour tunnel reopens after two-year repair"}


def test_article_true_travels_to_the_worker_as_its_spec() -> None:
    job = Job(article={"budget": 0.5})  # type: ignore[arg-type]  # the config's form
    assert job.article == ArticleSpec(budget=0.5)
    assert Job.from_wire(job.to_wire()).article == ArticleSpec(budget=0.5)
    assert Job.from_wire(Job(article=True).to_wire()).article == ArticleSpec()
    assert Job.from_wire(Job().to_wire()).article is False
    with pytest.raises(ValueError, match="budget"):
        ArticleSpec(budget=0)


@pytest.mark.parametrize(
    ("head", "url", "published"),
    [
        (
            '<meta property="article:published_time" content="2026-01-02T03:04:05+08:00">'
            '<meta name="date" content="2020-01-01">',
            "/2019/05/06/x",
            "2026-01-02T03:04:05+08:00",
        ),
        ('<meta name="dc.date" content="2024-07-08">', "/2019/05/06/x", "2024-07-08"),
        ('<meta name="pubdate" content="not a date">', "/2019/05/06/x", "2019-05-06"),
        (
            '<script type="application/ld+json">{"@type": "BlogPosting",'
            ' "datePublished": "yesterday"}</script>',
            "/2019/5/6/x",
            "2019-05-06",
        ),
        ("", "/x", None),
    ],
)
def test_published_falls_through_the_sources_in_order_of_trust(
    head: str, url: str, published: str | None
) -> None:
    html = f"<html><head>{head}</head><body><p>Short.</p></body></html>"
    assert item_of(html, BASE + url)["published"] == published


def test_an_article_dated_only_in_its_byline_text_gets_that_date() -> None:
    story = "".join(
        f"<p>Paragraph {i} of the river report, with enough words to read as prose.</p>"
        for i in range(12)
    )
    html = (
        "<html><head><title>River report</title></head><body><article><h1>River report</h1>"
        '<span class="submitted-by">Submitted on Mon, 2019-01-21 13:49</span>'
        f"{story}<p>Updated on Sun, 2019-02-03 08:00.</p></article></body></html>"
    )
    item = item_of(html, BASE + "/river-report")
    assert item["kind"] == "article"
    assert item["published"] == "2019-01-21"  # the first stated, not the update
    assert item["authors"] is None  # the byline names nobody: "Submitted" is no name
    # A structured source still wins over the text.
    dated = html.replace("</head>", '<meta name="dc.date" content="2019-01-20"></head>')
    assert item_of(dated, BASE + "/river-report")["published"] == "2019-01-20"


DATED_BYLINE = '<h4 class="vcard author">by <span class="fn">Ines Okafor</span>, May 8, 2010</h4>'
BIOGRAPHY = (
    '<div class="author-bio">Ines Okafor lives in Lagos and works as a senior transport'
    " correspondent</div>"
)


@pytest.mark.parametrize(
    ("byline", "authors"),
    [
        (DATED_BYLINE, ["Ines Okafor"]),
        (BIOGRAPHY, None),
        ('<p class="byline">By Dana A. Ford and The Associated Press</p>',
         ["Dana A Ford", "The Associated Press"]),
    ],
)  # fmt: skip
def test_a_byline_s_date_or_an_author_s_biography_is_no_name(
    byline: str, authors: list[str] | None
) -> None:
    story = "".join(
        f"<p>Paragraph {i} of the report, long enough to read as prose.</p>" for i in range(12)
    )
    html = f"<html><body><article><h1>Report</h1>{byline}{story}</article></body></html>"
    assert item_of(html, BASE + "/report")["authors"] == authors


def test_what_the_engine_leaves_of_a_byline_is_kept_only_when_it_may_be_a_name() -> None:
    names = ["Ines Okafor", "Dana A Ford", "The Associated Press", "AFP", "Michiel de Jong"]
    not_names = ["I", "Username", "Submitted", "May 8", "Kief Morris lives", "Posted by"]
    assert [article_module._may_be_a_name(n) for n in names] == [True] * len(names)
    assert [article_module._may_be_a_name(n) for n in not_names] == [False] * len(not_names)


def test_a_time_element_marked_as_the_publication_wins_over_other_times() -> None:
    html = (
        '<html><body><time datetime="2021-01-01">then</time>'
        '<time itemprop="datePublished" datetime="2022-02-02T10:00:00-05:00">now</time>'
        '<time itemprop="dateModified" datetime="2022-02-03T10:00:00Z">later</time></body></html>'
    )
    item = item_of(html, BASE + "/x")
    assert item["published"] == "2022-02-02T10:00:00-05:00"
    assert item["modified"] == "2022-02-03T10:00:00+00:00"


def test_an_undeclared_gbk_article_is_read_and_its_language_detected() -> None:
    body, charset = BAD_PAGES[f"{PREFIX}bad/gbk"]
    url = BASE + "/bad/gbk"
    job = Job(article=True)
    doc = parse_html(body, url, charset)
    text = decode_html(body, charset)
    item = extract_item(doc, text, job, (), Context(url, time.time()))[1]
    assert item["kind"] == "article"
    assert item["language"] == "zh"
    assert "港口隧道在维修两年后" in item["text"]


def test_a_page_without_a_body_or_any_text_has_empty_fields() -> None:
    body, _ = BAD_PAGES[f"{PREFIX}bad/no-body"]
    item = item_of(body.decode(), BASE + "/bad/no-body")
    assert item["kind"] == "other"
    assert item["text"] is None and item["markdown"] is None and item["language"] is None


def test_deep_nesting_neither_raises_nor_takes_long() -> None:
    body, _ = BAD_PAGES[f"{PREFIX}bad/deep"]
    started = time.process_time()
    item = item_of(body.decode(), BASE + "/bad/deep")
    assert time.process_time() - started < 2.0
    assert item["text"] is None


def test_a_page_over_its_budget_is_given_up_with_the_reason() -> None:
    html = html_of("news_article.html")
    spec = ArticleSpec(budget=1e-9)
    found = article_fields(parse_text(html, BASE), len(html), BASE, spec)
    assert found[ARTICLE_ERROR] == "over_budget"
    assert all(found[name] is None for name in ARTICLE_FIELDS)


def test_a_page_over_max_html_chars_is_refused_before_any_work() -> None:
    html = html_of("news_article.html")
    spec = ArticleSpec(max_html_chars=1000)
    found = article_fields(parse_text(html, BASE), len(html), BASE, spec)
    assert found[ARTICLE_ERROR] == "too_large"


def test_an_engine_that_raises_leaves_the_fields_empty_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_: object) -> None:
        raise AttributeError("'NoneType' object has no attribute 'text'")

    monkeypatch.setattr(article_module, "run_engine", broken)
    item = item_of(html_of("blog_post.html"), BASE)
    assert item[ARTICLE_ERROR] == "engine_failed"
    assert all(item[name] is None for name in ARTICLE_FIELDS)


def test_no_document_is_a_reason_too() -> None:
    assert article_fields(None, 0, BASE, ArticleSpec())[ARTICLE_ERROR] == "no_document"


def _spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_an_engine_that_never_returns_is_interrupted_at_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def forever(*_: object) -> None:
        while True:
            with contextlib.suppress(Exception):  # an engine's handlers must not swallow it
                _spin(10.0)

    monkeypatch.setattr(article_module, "run_engine", forever)
    before = signal.getsignal(signal.SIGPROF)
    html = html_of("blog_post.html")
    started = time.thread_time()
    found = article_fields(parse_text(html, BASE), len(html), BASE, ArticleSpec(budget=0.2))
    assert found[ARTICLE_ERROR] == "over_budget"
    assert time.thread_time() - started < 1.5
    assert signal.getsignal(signal.SIGPROF) == before  # nothing left armed
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)


def test_off_the_main_thread_the_budget_is_checked_after_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(article_module, "run_engine", lambda *_: _spin(0.3))
    html = html_of("blog_post.html")
    spec = ArticleSpec(budget=0.05)
    with ThreadPoolExecutor(1) as pool:
        found = pool.submit(article_fields, parse_text(html, BASE), len(html), BASE, spec)
        assert found.result()[ARTICLE_ERROR] == "over_budget"
