"""One stored page through the job's current rules, and why some cannot be.

Pure CPU work, no I/O: the runner (run.py) feeds it the records a store
reads and writes back what changed. A page is re-extracted only when the
worker would have extracted it from that body (HTML, or JSON when the job
reads JSON; no error, status below 400) and the body is the one the fetch
saw: its checksum, taken by the worker over the whole body, must match, so
a body cut by
`fetch.store_body_bytes` or `store.body_max_bytes` (or damaged) is skipped
rather than turned into an item of half a page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nadird.common.errors import FetchError
from nadird.items.keys import KeyRule, apply_key, compile_key
from nadird.items.processors import Context
from nadird.items.schema import VALID, FieldRule, compile_rules
from nadird.job.parser_choice import PageParser, page_parser
from nadird.job.spec import Job
from nadird.store.base import PageRecord
from nadird.worker.parse.item import ParsedJson, extract_item, item_simhash, json_body, json_text
from nadird.worker.parse.jsonsources import PageJson, is_json_type, looks_like_json
from nadird.worker.parse.page import lxml_tree, parse_page
from nadird.worker.parse.parser import content_checksum, decode_html
from nadird.worker.parse.signature import signature

# Why a page is skipped (the keys of the report's `skipped`).
UNREADABLE = "unreadable"  # the row or document does not read as a record
CORRUPT_BODY = "corrupt_body"  # the compressed body does not decompress
NO_BODY = "no_body"  # none stored (noindex, canonical elsewhere, older release)
BODY_INCOMPLETE = "body_incomplete"  # the body's checksum is not the fetch's
FETCH_ERROR = "fetch_error"  # the page is stored as an error
HTTP_ERROR = "http_status"  # status 400 or more: the worker extracts nothing
NOT_HTML = "not_html"  # neither fetch.html_types nor JSON the job reads
UNPARSABLE = "unparsable"  # no document could be parsed from the body
EXTRACT_FAILED = "extract_failed"  # a rule raised on this page
DUPLICATE = "duplicate"  # MongoDB: the content's item belongs to another page
NO_ITEM = "no_item"  # MongoDB: the page has no item to update
REFETCHED = "refetched"  # the master stored a newer fetch meanwhile

RENDERED_CHARSET = "utf-8"  # a rendered page's body is the browser's DOM, as UTF-8


@dataclass(frozen=True)
class Rules:
    """What re-extraction needs of the job and the fetch settings."""

    job: Job
    html_types: frozenset[str]
    compiled: tuple[FieldRule, ...] = field(default=(), compare=False)
    reads_json: bool = False  # JSON responses mean something to the job
    key: KeyRule | None = field(default=None, compare=False)  # the job's item_key
    parser: PageParser = "lxml"  # the worker's for the job's pages: the same fields

    @classmethod
    def of(cls, job: Job, html_types: Iterable[str]) -> Rules:
        compiled = compile_rules(job.schema)
        key = compile_key(job.item_key)
        types = frozenset(html_types)
        return cls(job, types, compiled, job.reads_json(), key, page_parser(job))


@dataclass(frozen=True, slots=True)
class Redone:
    """A page's item and signature as the current rules make them."""

    data: dict[str, Any]
    signature: str | None
    item_key: str | None = None
    simhash: int | None = None  # an article's near-duplicate fingerprint


def media_type(content_type: str | None) -> tuple[str | None, str | None]:
    """(type, charset) of a stored content type: the worker stores the type
    alone, an older release or another writer may have kept the parameters."""
    if content_type is None:
        return None, None
    kind, *params = content_type.split(";")
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    return kind.strip().lower(), charset


def why_not(record: PageRecord, rules: Rules) -> str | None:
    """Why the page cannot be re-extracted; None when it can."""
    if record.error is not None:
        return FETCH_ERROR
    if record.status >= 400:
        return HTTP_ERROR
    kind = media_type(record.content_type)[0]
    if kind not in rules.html_types and not _may_be_json(record, kind, rules):
        return NOT_HTML
    if record.body is None:
        return NO_BODY
    if record.checksum is not None and content_checksum(record.body) != record.checksum:
        return BODY_INCOMPLETE
    return None


def _may_be_json(record: PageRecord, kind: str | None, rules: Rules) -> bool:
    if not rules.reads_json:
        return False
    return is_json_type(kind) or (record.body is not None and looks_like_json(record.body))


def redo(record: PageRecord, rules: Rules) -> Redone | str:
    """The page's item under the current rules, or the reason it is skipped."""
    reason = why_not(record, rules)
    if reason is not None or record.body is None:
        return reason or NO_BODY
    kind, charset = media_type(record.content_type)
    ctx = Context(record.final_url, record.fetched_at)
    found = json_body(rules.reads_json, kind, record.body)
    try:
        if isinstance(found, FetchError):
            return UNPARSABLE
        if isinstance(found, ParsedJson):
            return _from_json(record, found, rules, ctx)
        if kind not in rules.html_types:  # it only looked like JSON
            return NOT_HTML
        return _from_html(record, RENDERED_CHARSET if record.rendered else charset, rules, ctx)
    except ValueError:  # a selector that cannot be evaluated on this page
        return EXTRACT_FAILED


def _from_html(record: PageRecord, charset: str | None, rules: Rules, ctx: Context) -> Redone | str:
    body = record.body or b""
    text = decode_html(body, charset)  # once, for the parser and the regexes
    doc = parse_page(text, record.final_url, rules.parser)
    if doc is None:
        return UNPARSABLE
    job = rules.job
    data = extract_item(doc, text, job, rules.compiled, ctx)[1]
    key = _key(record, data, rules)
    signs_fields = bool(job.fields or job.article)
    tree = lxml_tree(doc)  # fields sign Lexbor's pages, which have no text signature
    sig = signature(signs_fields, data, tree, job.signature_ignore) if job.revisits else None
    return Redone(data, sig, key, item_simhash(job, data))


def _from_json(record: PageRecord, found: ParsedJson, rules: Rules, ctx: Context) -> Redone:
    job, page = rules.job, PageJson(None, found.value)
    data = extract_item(None, json_text(record.body or b""), job, rules.compiled, ctx, page)[1]
    key = _key(record, data, rules)
    sig = signature(bool(job.fields), data, None, []) if job.revisits else None
    return Redone(data, sig, key)


def _key(record: PageRecord, data: dict[str, Any], rules: Rules) -> str | None:
    """The item's key, as the worker makes it: last, since a key that cannot
    be made marks the item invalid."""
    return apply_key(rules.key, record.url, record.final_url, data)


def is_invalid(data: dict[str, Any]) -> bool:
    return data.get(VALID) is False
