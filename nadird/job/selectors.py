"""A job's field selectors compiled, and checked before any crawl starts.

A job's selectors run on every page of the job, so each expression is
compiled once and cached, here where both the config loader (to refuse a bad
job with the field's name) and the worker (to run it) take it. Running a
compiled selector on a page is the worker's (worker/parse/fields.py).
"""

from __future__ import annotations

import functools
import re

import lxml.html
from cssselect import SelectorError
from lxml import etree
from lxml.cssselect import CSSSelector

from nadird.job.article import ARTICLE_FIELDS
from nadird.job.jmes import is_json_selector, validate_json_selector
from nadird.job.spec import Selector

Compiled = etree.XPath | re.Pattern[str]


@functools.lru_cache(maxsize=1024)
def _compile_xpath(expr: str) -> etree.XPath:
    # Plain strings: "smart" ones keep a reference to their node, and so the tree.
    return etree.XPath(expr, smart_strings=False)


@functools.lru_cache(maxsize=1024)
def _compile_css(expr: str) -> etree.XPath:
    # The 'html' translator matches element names case-insensitively, as HTML does.
    return CSSSelector(expr, translator="html")


@functools.lru_cache(maxsize=1024)
def _compile_regex(expr: str) -> re.Pattern[str]:
    return re.compile(expr)


def selector_expression(sel: Selector) -> tuple[str, str]:
    """(kind, expression) of a selector; Selector guarantees exactly one is set."""
    if sel.xpath is not None:
        return "xpath", sel.xpath
    if sel.css is not None:
        return "css", sel.css
    return "regex", sel.regex or ""


def compile_selector(sel: Selector, where: str) -> Compiled:
    """The compiled xpath, css or regex; ValueError('WHERE: invalid ...') if it does not compile."""
    kind, expr = selector_expression(sel)
    try:
        if kind == "xpath":
            return _compile_xpath(expr)
        if kind == "css":
            return _compile_css(expr)
        return _compile_regex(expr)
    except (etree.XPathError, SelectorError, re.error) as exc:
        raise ValueError(f"{where}: invalid {kind} {expr!r}: {exc}") from None


@functools.cache
def _probe_document() -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring("<html><body><p>probe</p></body></html>")


def validate_fields(fields: dict[str, list[Selector]]) -> None:
    """Compile and trial-run every selector; ValueError('fields.NAME[i]: ...') on the first bad one.

    The trial run on a tiny document catches what compiling alone does not
    (unknown XPath functions, namespace prefixes, variables).
    """
    for name, selectors in fields.items():
        for i, sel in enumerate(selectors):
            where = f"fields.{name}[{i}]"
            if sel.article is not None:
                _check_generic_step(sel.article, i == len(selectors) - 1, where)
                continue
            if is_json_selector(sel):
                validate_json_selector(sel, where)
                continue
            kind, expr = selector_expression(sel)
            if not expr.strip():
                raise ValueError(f"{where}: empty {kind} expression")
            if sel.attr is not None and kind == "regex":
                raise ValueError(f"{where}: attr applies to xpath and css, not regex")
            _trial_run(sel, where)


def _check_generic_step(article: str, last: bool, where: str) -> None:
    """`{article: NAME}` names a generic field and ends the list: a selector
    after it would never run."""
    if article not in ARTICLE_FIELDS:
        names = ", ".join(ARTICLE_FIELDS)
        raise ValueError(f"{where}.article: expected one of {names}, got {article!r}")
    if not last:
        raise ValueError(f"{where}: the article step must be the last of the field's selectors")


def _trial_run(sel: Selector, where: str) -> None:
    compiled = compile_selector(sel, where)
    if not isinstance(compiled, re.Pattern):
        evaluate(compiled, _probe_document(), sel, where)


def evaluate(
    compiled: etree.XPath, doc: lxml.html.HtmlElement, sel: Selector, where: str
) -> object:
    """The xpath or css selector's result on the document; ValueError('WHERE:
    cannot evaluate ...') for what only evaluation finds."""
    try:
        return compiled(doc)
    except etree.XPathError as exc:  # e.g. an unknown function or namespace prefix
        kind, expr = selector_expression(sel)
        raise ValueError(f"{where}: cannot evaluate {kind} {expr!r}: {exc}") from None
