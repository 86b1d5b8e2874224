"""A page's item: the job's fields selected, then its schema applied.

The one code path from a fetched body to its `data`, shared by the worker
(worker/pages.py, on a fetched page) and `nadird reextract` (on a stored
body), so that re-extracting a page gives what a fetch would have given:
whether the body is read as JSON, which text the regexes see, and the
selectors, processors, types and `required` of the job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lxml.html import HtmlElement

from nadird.common.errors import ErrorKind, FetchError
from nadird.common.simhash import text_simhash
from nadird.items.processors import Context
from nadird.items.schema import FieldRule, apply_rules
from nadird.job.article import ArticleSpec
from nadird.job.spec import Job
from nadird.worker.parse.article.fields import article_fields
from nadird.worker.parse.base import Tree
from nadird.worker.parse.fields import extract_fields, present
from nadird.worker.parse.generic import GenericStep
from nadird.worker.parse.jsonsources import PageJson, is_json_type, load_json, looks_like_json


@dataclass(frozen=True, slots=True)
class ParsedJson:
    value: Any  # the body's JSON value (None is JSON's null)


# A JSON response's body, or the error of one that claims to be JSON and is not.
JsonBody = ParsedJson | FetchError


def json_body(reads_json: bool, content_type: str | None, body: bytes) -> JsonBody | None:
    """The JSON of a response a job that `reads_json` reads as JSON; a
    FetchError when it claims to be JSON and is not; None when it is no JSON
    response (then it is read as what its type says)."""
    if not reads_json:
        return None
    claimed = is_json_type(content_type)
    if not claimed and not looks_like_json(body):
        return None
    try:
        return ParsedJson(load_json(body))
    except ValueError as exc:
        if claimed:
            return FetchError(ErrorKind.PARSE, f"body is not JSON: {exc}")
        return None  # it only looked like JSON


def json_text(body: bytes) -> str:
    """What the regex selectors of a JSON response run on."""
    return body.decode("utf-8", "replace")


def extract_item(
    doc: Tree | None,
    text: str,
    job: Job,
    rules: tuple[FieldRule, ...],
    ctx: Context,
    page: PageJson | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(what the selectors found, the item the schema made of it).

    `text` is what regexes run on (an HTML body as `decode_html` reads it,
    `json_text` of a JSON one); `page` the JSON of a JSON response.
    A job with `article:` gets the article fields of an HTML page too, and
    so does a field ending with the generic step when it reaches it."""
    spec = job.article if isinstance(job.article, ArticleSpec) else ArticleSpec()
    # Articles read lxml's tree: a job with them never has Lexbor's (job/parser_choice.py).
    tree = doc if isinstance(doc, HtmlElement) else None
    generic = GenericStep(lambda: article_fields(tree, len(text), ctx.page_url, spec))
    html = generic if page is None else None
    selected: dict[str, Any] = dict(extract_fields(doc, text, job.fields, page, html))
    if isinstance(job.article, ArticleSpec) and html is not None:
        selected = with_article(selected, html.fields())
    selected.update(generic.marks())
    if not rules:
        return selected, dict(selected)
    return selected, apply_rules(dict(selected), rules, ctx)


def with_article(selected: dict[str, Any], article: dict[str, Any]) -> dict[str, Any]:
    """The article fields under the job's own: a field the job declares keeps
    its value, and takes the article's only where it found none."""
    merged = dict(article)
    for name, value in selected.items():
        if present(value) or name not in merged:
            merged[name] = value
    return merged


def item_simhash(job: Job, data: dict[str, Any]) -> int | None:
    """The near-duplicate fingerprint of an article item's text; None when
    the job does not look for near-duplicates or the item has no text."""
    text = data.get("text")
    if not job.article or job.near_duplicates == "keep" or not isinstance(text, str):
        return None
    return text_simhash(text)
