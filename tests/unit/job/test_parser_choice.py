"""Which parser reads a job's pages: decided once from the job's rules, and
`parser:` refused with its reasons when it asks Lexbor of a job that needs lxml."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.common.errors import ConfigError
from nadird.config import load_config
from nadird.job.parser_choice import lxml_needs, page_parser, parser_description
from nadird.job.spec import Job, Selector


def job(**kwargs: object) -> Job:
    return Job.from_wire({"name": "j", **kwargs})


CSS_TITLE = {"title": [{"css": "title"}]}


@pytest.mark.parametrize(
    ("rules", "parser"),
    [
        ({}, "lexbor"),  # links only
        ({"fields": CSS_TITLE}, "lexbor"),
        ({"fields": {"t": [{"css": "h1.title", "attr": "id", "multiple": True}]}}, "lexbor"),
        ({"fields": {"t": [{"regex": "id=(\\d+)"}]}}, "lexbor"),
        ({"fields": CSS_TITLE, "revisit": {"every": "1d"}}, "lexbor"),  # signs its fields
        ({"fields": {"t": [{"css": "h1"}, {"xpath": "//h2"}]}}, "lxml"),
        ({"fields": {"t": [{"css": "p:contains('x')"}]}}, "lxml"),  # cssselect's, not CSS
        ({"fields": {"t": [{"jsonld": "Product", "jmes": "name"}]}}, "lxml"),
        ({"fields": {"t": [{"script": "window.s", "jmes": "a"}]}}, "lxml"),
        ({"fields": {"t": [{"css": "h1"}, {"article": "title"}]}}, "lxml"),
        ({"article": True}, "lxml"),
        ({"feeds": True}, "lxml"),
        ({"revisit": {"every": "1d"}}, "lxml"),  # no fields: signs the page's text
        ({"expire": "30d"}, "lxml"),
        ({"fields": CSS_TITLE, "parser": "lxml"}, "lxml"),
        ({"parser": "lexbor"}, "lexbor"),
    ],
)
def test_the_job_rules_decide_the_parser(rules: dict[str, object], parser: str) -> None:
    assert page_parser(job(**rules)) == parser


def test_the_description_names_the_first_reason() -> None:
    xpath = job(fields={"a": [{"css": "h1"}], "b": [{"xpath": "//h2"}]})
    assert parser_description(xpath) == "lxml (auto: fields.b[0] is XPath)"
    assert parser_description(job(fields=CSS_TITLE)).startswith("lexbor (auto:")
    assert parser_description(job(parser="lxml")) == "lxml (parser: lxml)"
    assert lxml_needs(job(article=True, feeds=True)) == [
        "article: extracts articles",
        "feeds: finds feed links",
    ]


def test_lexbor_is_refused_with_the_reasons_for_lxml() -> None:
    with pytest.raises(ValueError, match=r"parser: lexbor cannot serve this job \(fields\.t\[0\]"):
        Job(fields={"t": [Selector(xpath="//title")]}, parser="lexbor")
    with pytest.raises(ValueError, match="article: extracts articles"):
        Job(article=True, parser="lexbor")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("fast", "jobs.j.parser: expected one of 'auto', 'lxml', 'lexbor', got 'fast'"),
        ("lexbor\n    feeds: true", "jobs.j: parser: lexbor cannot serve this job (feeds:"),
    ],
)
def test_a_wrong_parser_in_a_config_file_names_the_key(
    tmp_path: Path, value: str, says: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(f"jobs:\n  j:\n    parser: {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert says in str(caught.value) and str(path) in str(caught.value)


def test_the_choice_travels_with_the_job() -> None:
    sent = job(fields=CSS_TITLE, parser="lxml")
    assert Job.from_wire(sent.to_wire()).parser == "lxml"
