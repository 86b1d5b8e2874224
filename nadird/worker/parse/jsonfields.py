"""JMESPath selectors: a field's values from the JSON of a page (jsonsources.py).

Expressions are compiled once and cached, like the HTML selectors. A value
keeps its JSON type (a price of 12.5 stays a number, a stock of 0 stays 0);
strings are stripped. A list result is a list of matches: `multiple` keeps
them all, otherwise the first non-empty one is the field's value.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import jmespath
from jmespath import exceptions as jmes_errors
from jmespath import functions as jmes_functions
from jmespath.parser import ParsedResult

from nadird.job.spec import Selector
from nadird.worker.parse.jsonsources import PageJson

# What JMESPath knows: name -> the argument signature (its last one may be variadic).
_FUNCTIONS: dict[str, Any] = jmes_functions.Functions().FUNCTION_TABLE
# A selector that names a source and no expression takes the whole object.
WHOLE = "@"


def is_json_selector(sel: Selector) -> bool:
    return sel.jmes is not None or sel.jsonld is not None or sel.script is not None


def _reason(exc: jmes_errors.JMESPathError) -> str:
    """One line: JMESPath's messages repeat the expression over several lines."""
    if isinstance(exc, jmes_errors.IncompleteExpressionError):
        return "incomplete expression"
    if isinstance(exc, jmes_errors.ParseError):
        return f"{exc.msg} at column {exc.lex_position}"
    return " ".join(str(exc).split("\n", 1)[0].split())


@functools.lru_cache(maxsize=1024)
def _compile_jmes(expr: str) -> ParsedResult:
    return jmespath.compile(expr)


def compile_jmes(expr: str, where: str) -> ParsedResult:
    """A compiled expression; ValueError('WHERE: invalid jmes ...') when it does not compile
    or calls a function JMESPath lacks or with the wrong number of arguments."""
    try:
        compiled = _compile_jmes(expr)
    except jmes_errors.JMESPathError as exc:
        raise ValueError(f"{where}: invalid jmes {expr!r}: {_reason(exc)}") from None
    tree: Any = compiled.parsed  # typed as nodes, but a slice's children are numbers
    problem = _bad_call(tree)
    if problem is not None:
        raise ValueError(f"{where}: invalid jmes {expr!r}: {problem}")
    return compiled


def _bad_call(node: dict[str, Any]) -> str | None:
    """The first unknown function or wrong argument count in an expression's tree.

    JMESPath itself finds these only when the call is evaluated, which a
    page's data may never reach."""
    if node.get("type") == "function_expression":
        name = node["value"]
        entry = _FUNCTIONS.get(name)
        if entry is None:
            return f"unknown function {name}()"
        signature = entry["signature"]
        given = len(node["children"])
        variadic = bool(signature) and signature[-1].get("variadic", False)
        too_few = given < len(signature)
        if too_few or (given > len(signature) and not variadic):
            return (
                f"{name}() takes {len(signature)}{'+' if variadic else ''} arguments, got {given}"
            )
    for child in node.get("children", []):
        if isinstance(child, dict):
            problem = _bad_call(child)
            if problem is not None:
                return problem
    return None


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
                f"{where}: cannot evaluate jmes {sel.jmes!r}: {_reason(exc)}"
            ) from None
        yield from _matches(result)


def _matches(result: Any) -> Iterator[Any]:
    for value in result if isinstance(result, list) else [result]:
        if isinstance(value, str):
            yield value.strip()
        elif value is not None:
            yield value


def validate_json_selector(sel: Selector, where: str) -> None:
    """ValueError('WHERE: ...') when the selector could never run."""
    for key in ("jmes", "jsonld", "script"):
        value = getattr(sel, key)
        if value is not None and not value.strip():
            raise ValueError(f"{where}: empty {key}")
    if sel.attr is not None:
        raise ValueError(f"{where}: attr applies to xpath and css, not to JSON")
    compile_jmes(sel.jmes if sel.jmes is not None else WHOLE, where)
