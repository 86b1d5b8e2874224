"""One stored page through the job's current rules, and why some cannot be.

Pure CPU work, no I/O: the runner (run.py) feeds it the records a store
reads and writes back what changed. A page is re-extracted only when the
worker would have extracted it from that body (HTML, no error, status below
400) and the body is the one the fetch saw: its checksum, taken by the
worker over the whole body, must match, so a body cut by
`fetch.store_body_bytes` or `store.body_max_bytes` (or damaged) is skipped
rather than turned into an item of half a page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nadird.items.processors import Context
from nadird.items.schema import VALID, FieldRule, compile_rules
from nadird.jobs import Job
from nadird.store.base import PageRecord
from nadird.worker.parse.item import extract_item
from nadird.worker.parse.parser import content_checksum, decode_html, parse_text
from nadird.worker.parse.signature import signature

# Why a page is skipped (the keys of the report's `skipped`).
UNREADABLE = "unreadable"  # the row or document does not read as a record
CORRUPT_BODY = "corrupt_body"  # the compressed body does not decompress
NO_BODY = "no_body"  # none stored (noindex, canonical elsewhere, older release)
BODY_INCOMPLETE = "body_incomplete"  # the body's checksum is not the fetch's
FETCH_ERROR = "fetch_error"  # the page is stored as an error
HTTP_ERROR = "http_status"  # status 400 or more: the worker extracts nothing
NOT_HTML = "not_html"  # a content type outside fetch.html_types
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

    @classmethod
    def of(cls, job: Job, html_types: Iterable[str]) -> Rules:
        return cls(job, frozenset(html_types), compile_rules(job.schema))


@dataclass(frozen=True, slots=True)
class Redone:
    """A page's item and signature as the current rules make them."""

    data: dict[str, Any]
    signature: str | None


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
    if media_type(record.content_type)[0] not in rules.html_types:
        return NOT_HTML
    if record.body is None:
        return NO_BODY
    if record.checksum is not None and content_checksum(record.body) != record.checksum:
        return BODY_INCOMPLETE
    return None


def redo(record: PageRecord, rules: Rules) -> Redone | str:
    """The page's item under the current rules, or the reason it is skipped."""
    reason = why_not(record, rules)
    if reason is not None or record.body is None:
        return reason or NO_BODY
    charset = RENDERED_CHARSET if record.rendered else media_type(record.content_type)[1]
    text = decode_html(record.body, charset)  # once, for the parser and the regexes
    doc = parse_text(text, record.final_url)
    if doc is None:
        return UNPARSABLE
    job = rules.job
    ctx = Context(record.final_url, record.fetched_at)
    try:
        data = extract_item(doc, text, job, rules.compiled, ctx)
    except ValueError:  # a selector that cannot be evaluated on this page
        return EXTRACT_FAILED
    sig = signature(bool(job.fields), data, doc, job.signature_ignore) if job.revisits else None
    return Redone(data, sig)


def is_invalid(data: dict[str, Any]) -> bool:
    return data.get(VALID) is False
