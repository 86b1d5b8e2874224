"""The generic step at the end of a field's selectors (`{article: text}`):
taken only when every selector before found nothing, marked in the item,
counted by the master, and refused in a config when it names no article field."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.articles import ARTICLE_TEXT, PAGES, html_of

from nadird.common.errors import ConfigError, ErrorKind, FetchError
from nadird.config import load_config
from nadird.items.processors import Context
from nadird.items.schema import compile_rules
from nadird.job.article import ARTICLE_ERROR, FALLBACK
from nadird.job.spec import Job, Selector
from nadird.master.observe.metrics import MasterMetrics
from nadird.master.results.articles import ArticleTallies
from nadird.protocol.messages import PageResult
from nadird.testing import forkserver
from nadird.worker.parse import item as item_module
from nadird.worker.parse.item import extract_item
from nadird.worker.parse.parser import parse_text

NEWS = next(p for p in PAGES if p.file == "news_article.html")
URL = "https://news.test" + NEWS.path
# The site's own rule for the body, then the generic step; the title's rule finds it.
JOB = Job(
    fields={
        "title": [Selector(css="h1")],
        "body": [Selector(css="div.story-body-v1"), Selector(article="text")],
        "when": [Selector(css="time.v1", attr="datetime"), Selector(article="published")],
    }
)


def item_of(html: str, job: Job = JOB) -> dict[str, Any]:
    doc = parse_text(html, URL)
    return extract_item(doc, html, job, compile_rules(job.schema), Context(URL, time.time()))[1]


def test_a_field_whose_selectors_find_nothing_takes_the_generic_value() -> None:
    item = item_of(html_of(NEWS.file))
    for sentence in ARTICLE_TEXT[NEWS.file]:
        assert sentence in item["body"]
    assert item["when"] == "2026-03-14T09:30:00+01:00"
    assert item[FALLBACK] == ["body", "when"]
    assert "text" not in item and "kind" not in item  # only the job's fields
    assert item["title"]


def test_a_selector_that_finds_its_value_wins_and_nothing_is_extracted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    real = item_module.article_fields

    def counted(*args: Any) -> dict[str, Any]:
        calls.append("extract")
        return real(*args)

    # Counted, not replaced: the step must not pay for an extraction it does not need.
    monkeypatch.setattr("nadird.worker.parse.item.article_fields", counted)
    html = html_of(NEWS.file).replace(
        "<body>", '<body><div class="story-body-v1">Our own body</div><time class="v1" '
        'datetime="2026-01-01T00:00:00Z">x</time>', 1
    )  # fmt: skip
    item = item_of(html)
    assert item["body"] == "Our own body"
    assert item["when"] == "2026-01-01T00:00:00Z"
    assert FALLBACK not in item and calls == []
    item_of(html_of(NEWS.file))
    assert calls == ["extract"]  # two fields fell back, one extraction


def test_a_given_up_extraction_leaves_the_field_empty_and_says_why() -> None:
    # A body that parsed to no document: the selectors find nothing, and
    # neither does the generic step; the item says why.
    job = Job(fields={"body": [Selector(css="div.none"), Selector(article="text")]})
    ctx = Context(URL, time.time())
    item = extract_item(None, "\x00\x01", job, compile_rules(job.schema), ctx)[1]
    assert item == {"body": None, ARTICLE_ERROR: "no_document"}


def test_the_generic_step_travels_with_the_job() -> None:
    assert Job.from_wire(JOB.to_wire()) == JOB


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        (
            "[{css: div.body}, {article: txt}]",
            "jobs.news: fields.body[1].article: expected one of kind, title, text",
        ),
        (
            "[{article: text}, {css: div.body}]",
            "jobs.news: fields.body[0]: the article step must be the last",
        ),
        ("[{article: text, css: div.body}]", "article: a step of its own, got css beside it"),
    ],
)
def test_a_wrong_generic_step_is_refused_naming_the_field(
    tmp_path: Path, fields: str, says: str
) -> None:
    path = tmp_path / "jobs.yaml"
    path.write_text(f"jobs:\n  news:\n    fields:\n      body: {fields}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert says in str(caught.value)


def test_the_command_line_exits_2_on_a_wrong_article_field(tmp_path: Path) -> None:
    path = tmp_path / "jobs.yaml"
    path.write_text("jobs:\n  news:\n    fields:\n      body: [{article: body}]\n")
    done = forkserver.run([sys.executable, "-m", "nadird", "check", "-c", str(path)], timeout=60)
    assert done.returncode == 2, done.stderr
    assert "fields.body[0].article: expected one of" in done.stderr
    assert str(path) in done.stderr


def page(data: dict[str, Any], error: FetchError | None = None) -> PageResult:
    return PageResult(
        url=URL, fp=b"f" * 16, final_url=URL, status=200, fetched_at=0.0, depth=0, data=data,
        error=None if error is None else error.message,
        error_kind=None if error is None else error.kind,
    )  # fmt: skip


def test_the_master_counts_fallbacks_and_given_up_pages_per_job() -> None:
    tallies = ArticleTallies()
    jobs = {"news": JOB, "blogs": Job(article=True)}
    tallies.observe(page({"body": "x", FALLBACK: ["body", "when"]}), "news", jobs)
    tallies.observe(page({"body": "y", FALLBACK: ["body"]}), "news", jobs)
    tallies.observe(page({ARTICLE_ERROR: "over_budget"}), "blogs", jobs)
    tallies.observe(page({}), "news", jobs)  # a page with no item
    binary = page({}, FetchError(ErrorKind.PARSE, "document could not be parsed"))
    tallies.observe(binary, "blogs", jobs)  # an article job's page: given up
    tallies.observe(binary, "news", jobs)  # no article job: nothing to give up
    metrics = MasterMetrics()
    metrics.watch(
        lambda: {
            "stats": {}, "errors": {}, "refused": {}, "statuses": {}, "workers_by_status": {},
            "domains": [], "state_write_failures": 0,
            "fallback_extractions": dict(tallies.fallbacks),
            "article_given_up": dict(tallies.given_up),
        }
    )  # fmt: skip
    families = {f.name: f for f in text_string_to_metric_families(metrics.exposition().decode())}
    fell_back = {
        (s.labels["job"], s.labels["field"]): s.value
        for s in families["nadird_fallback_extractions"].samples
        if s.name.endswith("_total")
    }
    assert fell_back == {("news", "body"): 2, ("news", "when"): 1}
    given_up = {
        (s.labels["job"], s.labels["reason"]): s.value
        for s in families["nadird_article_given_up"].samples
        if s.name.endswith("_total")
    }
    assert given_up == {("blogs", "over_budget"): 1, ("blogs", "unparsable"): 1}
