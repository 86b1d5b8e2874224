"""A job's fields from a page: xpath, css, regex or JMESPath selectors with fallbacks.

A job's selectors run on every page of the job, so each expression is compiled
once and cached (job/selectors.py). A document without matches yields None fields. Bad selectors
do raise (ValueError naming the field), but `validate_fields` (job/selectors.py,
through job/validate.py) lets the config loader catch them before any crawl starts.
JMESPath selectors over a page's JSON are in jsonfields.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import lxml.html
from lxml import etree

from nadird.job.jmes import is_json_selector
from nadird.job.selectors import compile_selector, evaluate
from nadird.job.spec import Selector
from nadird.worker.parse.base import Tree
from nadird.worker.parse.generic import GenericStep
from nadird.worker.parse.jsonfields import json_values
from nadird.worker.parse.jsonsources import PageJson
from nadird.worker.parse.lexbor import LexborPage

# HTML selectors give strings; JSON ones keep the JSON type (numbers, objects...).
FieldValue = str | int | float | bool | list[Any] | dict[str, Any] | None


def _values(
    sel: Selector, doc: Tree | None, raw_text: str, where: str, page: PageJson
) -> Iterator[Any]:
    """Every value the selector yields on the page, empty ones included, lazily."""
    if is_json_selector(sel):
        return json_values(sel, page, where)
    if isinstance(doc, LexborPage) and sel.css is not None:
        # Only CSS fields Lexbor reads reach here (job/parser_choice.py).
        return doc.css_values(sel.css, sel.attr)
    compiled = compile_selector(sel, where)
    if isinstance(compiled, re.Pattern):
        return _regex_values(compiled, raw_text)
    if not isinstance(doc, lxml.html.HtmlElement):
        return iter(())
    return _xpath_values(evaluate(compiled, doc, sel, where), sel.attr)


def _regex_values(pattern: re.Pattern[str], text: str) -> Iterator[str]:
    group = 1 if pattern.groups else 0
    for match in pattern.finditer(text):
        value = match.group(group)
        if value is not None:  # an optional group that did not take part
            yield value.strip()


def _xpath_values(result: object, attr: str | None) -> Iterator[str]:
    """Strings from an XPath result, rendered as XPath's string() would."""
    if isinstance(result, list):
        for item in result:
            yield _item_text(item, attr)
    elif isinstance(result, bool):
        yield "true" if result else "false"
    elif isinstance(result, float):
        # NaN is what XPath gives for a number of nothing: treat it as no match
        # so the next selector gets its turn.
        if result == result:
            yield str(int(result)) if result.is_integer() else repr(result)
    elif isinstance(result, str):
        yield result.strip()


def _item_text(item: object, attr: str | None) -> str:
    if isinstance(item, etree._Element):
        if attr is not None:
            return (item.get(attr) or "").strip()
        return _normalized_text(item)
    return str(item).strip()


def _normalized_text(element: etree._Element) -> str:
    if isinstance(element, lxml.html.HtmlMixin):
        text = element.text_content()
    else:
        text = element.text or ""
    return " ".join(text.split())


def present(value: Any) -> bool:
    """Not empty: 0 and false are values (a stock of 0), "", [] and {} are not."""
    return value is not None and value != "" and value != [] and value != {}


def _extract_field(
    doc: Tree | None,
    raw_text: str,
    name: str,
    selectors: list[Selector],
    page: PageJson,
    generic: GenericStep | None,
) -> FieldValue:
    """The first selector with a non-empty result wins; later ones are
    fallbacks, the generic step (`{article: NAME}`, always last) the final one."""
    for i, sel in enumerate(selectors):
        if sel.article is not None:
            return None if generic is None else generic.value(name, sel.article, present)
        where = f"fields.{name}[{i}]"
        found = (v for v in _values(sel, doc, raw_text, where, page) if present(v))
        if sel.multiple:
            values = list(found)
            if values:
                return values
        else:
            value: FieldValue = next(found, None)
            if value is not None:
                return value
    return None


def extract_fields(
    doc: Tree | None,
    raw_text: str,
    fields: dict[str, list[Selector]],
    page: PageJson | None = None,
    generic: GenericStep | None = None,
) -> dict[str, FieldValue]:
    """Each field's value: a string (a JSON value for JMESPath selectors), a
    list (multiple=True) or None if nothing matched.

    Regex selectors run on `raw_text` and still work when `doc` is None;
    `page` holds the JSON of a JSON response (JSON-LD and scripts come from `doc`);
    `generic` the page's article fields for the generic steps (none: they find nothing).
    """
    if page is None:  # JSON-LD and inline scripts are read from lxml's tree only
        page = PageJson(doc if isinstance(doc, lxml.html.HtmlElement) else None)
    return {
        name: _extract_field(doc, raw_text, name, sels, page, generic)
        for name, sels in fields.items()
    }
