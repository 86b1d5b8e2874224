"""JMESPath expressions of a job: compiled once, checked before any crawl starts.

A job's `jmes` selectors and `links.jmes` expressions run on every JSON page,
so each is compiled once and cached. JMESPath itself finds an unknown
function or a wrong argument count only when the call is evaluated, which a
page's data may never reach: `compile_jmes` walks the tree to find them when
the job loads. Evaluating an expression on a page is the worker's
(worker/parse/jsonfields.py).
"""

from __future__ import annotations

import functools
from typing import Any

import jmespath
from jmespath import exceptions as jmes_errors
from jmespath import functions as jmes_functions
from jmespath.parser import ParsedResult

from nadird.job.spec import Selector

# What JMESPath knows: name -> the argument signature (its last one may be variadic).
_FUNCTIONS: dict[str, Any] = jmes_functions.Functions().FUNCTION_TABLE
# A selector that names a source and no expression takes the whole object.
WHOLE = "@"


def is_json_selector(sel: Selector) -> bool:
    return sel.jmes is not None or sel.jsonld is not None or sel.script is not None


def jmes_reason(exc: jmes_errors.JMESPathError) -> str:
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
        raise ValueError(f"{where}: invalid jmes {expr!r}: {jmes_reason(exc)}") from None
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


def validate_json_selector(sel: Selector, where: str) -> None:
    """ValueError('WHERE: ...') when the selector could never run."""
    for key in ("jmes", "jsonld", "script"):
        value = getattr(sel, key)
        if value is not None and not value.strip():
            raise ValueError(f"{where}: empty {key}")
    if sel.attr is not None:
        raise ValueError(f"{where}: attr applies to xpath and css, not to JSON")
    compile_jmes(sel.jmes if sel.jmes is not None else WHOLE, where)
