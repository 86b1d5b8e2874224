"""A page's item: the job's fields selected, then its schema applied.

The one code path from a parsed page to its `data`, shared by the worker
(worker/pages.py, on a fetched page) and `nadird reextract` (on a stored
body), so that re-extracting a page gives what a fetch would have given.
"""

from __future__ import annotations

from typing import Any

from lxml.html import HtmlElement

from nadird.items.processors import Context
from nadird.items.schema import FieldRule, apply_rules
from nadird.jobs import Job
from nadird.worker.parse.fields import extract_fields


def extract_item(
    doc: HtmlElement, text: str, job: Job, rules: tuple[FieldRule, ...], ctx: Context
) -> dict[str, Any]:
    """The item of a page: selectors (regexes on `text`, the body as
    `decode_html` reads it), then the processors, types and `required` of
    the job's schema."""
    data: dict[str, Any] = dict(extract_fields(doc, text, job.fields))
    if rules:
        data = apply_rules(data, rules, ctx)
    return data
