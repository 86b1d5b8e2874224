"""JMESPath selectors: a field's values from the JSON of a page (jsonsources.py).

Expressions are compiled once and cached (job/jmes.py), like the HTML selectors. A value
keeps its JSON type (a price of 12.5 stays a number, a stock of 0 stays 0);
strings are stripped. A list result is a list of matches: `multiple` keeps
them all, otherwise the first non-empty one is the field's value.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jmespath import exceptions as jmes_errors

from nadird.job.jmes import WHOLE, compile_jmes, jmes_reason
from nadird.job.spec import Selector
from nadird.worker.parse.jsonsources import PageJson


def _roots(sel: Selector, page: PageJson) -> list[Any]:
    """What the expression runs over: JSON-LD objects, a script's object, or the body."""
    if sel.jsonld is not None:
        return list(page.jsonld(sel.jsonld))
    if sel.script is not None:
        found = page.script(sel.script)
        return [] if found is None else [found]
    return [] if page.body is None else [page.body]


def json_values(sel: Selector, page: PageJson, where: str) -> Iterator[Any]:
    """Every value the selector finds on the page, in order, lazily."""
    compiled = compile_jmes(sel.jmes if sel.jmes is not None else WHOLE, where)
    for root in _roots(sel, page):
        try:
            result = compiled.search(root)
        except jmes_errors.JMESPathTypeError:
            continue  # a function given the wrong type of data: no match on this page
        except jmes_errors.JMESPathError as exc:
            raise ValueError(
                f"{where}: cannot evaluate jmes {sel.jmes!r}: {jmes_reason(exc)}"
            ) from None
        yield from _matches(result)


def _matches(result: Any) -> Iterator[Any]:
    for value in result if isinstance(result, list) else [result]:
        if isinstance(value, str):
            yield value.strip()
        elif value is not None:
            yield value
