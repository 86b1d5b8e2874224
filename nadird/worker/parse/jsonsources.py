"""JSON a page carries: a JSON body, JSON-LD blocks, objects inline scripts assign.

Each source is parsed at most once per page, and only when a selector asks
for it (`PageJson`). Bad JSON never raises here: a JSON-LD block or a script
that does not parse is skipped like a selector that matched nothing. Only a
response that claims to be JSON and is not is an error (`load_json`, which
the page processor records as a parse error).

Inline state objects are read with the standard library's JSON decoder
first; chompjs takes the ones that are JavaScript rather than JSON
(unquoted keys, single quotes, trailing commas).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import chompjs
import lxml.html

# application/json, text/json, and every structured +json type
# (application/ld+json, application/vnd.api+json, application/problem+json...).
_JSON_TYPES = frozenset({"application/json", "text/json"})
_BOM = "\ufeff"
# JSON-LD is often wrapped as if scripts still had to hide from old browsers.
_WRAPPERS = re.compile(r"^\s*(?:<!--|<!\[CDATA\[)|(?:-->|\]\]>)\s*;?\s*$")
_LD_TYPES = frozenset({"application/ld+json"})
_NO_ITEM: list[Any] = []


def is_json_type(content_type: str | None) -> bool:
    """Whether the Content-Type says JSON."""
    if content_type is None:
        return False
    kind = content_type.lower()
    return kind in _JSON_TYPES or kind.endswith("+json")


def looks_like_json(body: bytes) -> bool:
    """Whether a body starts the way a JSON object or array does (no HTML page does)."""
    head = body[:64].lstrip(b" \t\r\n").removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    return head[:1] in (b"{", b"[")


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON, and a store could not write them back.
    raise ValueError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


def _integer(text: str) -> int | str:
    """An integer the results message can carry (msgpack: 64 bits); a longer
    one (an id, most often) keeps its digits as a string."""
    value = int(text)
    return value if _INT_MIN <= value < _UINT_END else text


# What every parse of page JSON uses: the values a store and msgpack can hold.
_NUMBERS: dict[str, Any] = {
    "parse_constant": _no_constant,
    "parse_float": _finite,
    "parse_int": _integer,
}
_INT_MIN, _UINT_END = -(2**63), 2**64


def load_json(text: str | bytes) -> Any:
    """The JSON value of a body; ValueError with a short reason when it is not JSON."""
    try:
        return json.loads(text, **_NUMBERS)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, a bad encoding, an integer too long
        raise ValueError(str(exc)[:200]) from None


def jsonld_objects(doc: lxml.html.HtmlElement) -> list[dict[str, Any]]:
    """The page's JSON-LD objects in document order: each block's object, the
    elements of a block that is an array, and the members of any @graph."""
    found: list[dict[str, Any]] = []
    for script in doc.iter("script"):
        if (script.get("type") or "").strip().lower() not in _LD_TYPES:
            continue
        try:
            value = load_json(_WRAPPERS.sub("", script.text or ""))
        except ValueError:
            continue
        _flatten(value, found)
    return found


def _flatten(value: Any, into: list[dict[str, Any]]) -> None:
    if isinstance(value, list):
        for item in value:
            _flatten(item, into)
    elif isinstance(value, dict):
        graph = value.get("@graph")
        if isinstance(graph, list):
            _flatten(graph, into)
        else:
            into.append(value)


def has_type(obj: dict[str, Any], wanted: str) -> bool:
    """Whether a JSON-LD object is of the schema.org type `wanted` ("*": any).

    "Product", "schema:Product" and "https://schema.org/Product" all are.
    """
    if wanted == "*":
        return True
    declared = obj.get("@type")
    names = declared if isinstance(declared, list) else [declared]
    return any(isinstance(n, str) and re.split(r"[/#:]", n)[-1] == wanted for n in names)


def script_object(doc: lxml.html.HtmlElement, name: str) -> Any:
    """What `name` holds in the page's inline scripts: the value assigned to it
    (`window.__INITIAL_STATE__ = {...};`, `var state = [...]`), or the JSON
    text of the script element whose id is `name`. None when no script has it.
    A name also matches as the last part of a dotted one (`__INITIAL_STATE__`
    finds `window.__INITIAL_STATE__ = ...`)."""
    assignment = re.compile(r"(?<![\w$])" + re.escape(name) + r"\s*=(?!=)\s*")
    for script in doc.iter("script"):
        if script.get("src") is not None:
            continue
        text = script.text or ""
        if script.get("id") == name:
            try:
                return load_json(text.strip().removeprefix(_BOM))
            except ValueError:
                continue
        for match in assignment.finditer(text):
            value = _literal_at(text, match.end())
            if value is not None:
                return value
    return None


def _literal_at(text: str, start: int) -> Any:
    """The object or array literal that starts at `start`, or None."""
    if text[start : start + 1] not in ("{", "["):
        return None
    try:
        return json.JSONDecoder(**_NUMBERS).raw_decode(text, start)[0]
    except (ValueError, RecursionError):
        pass
    try:
        return chompjs.parse_js_object(text[start:], loader_kwargs=_NUMBERS)
    except (ValueError, RecursionError):
        return None


class PageJson:
    """The JSON sources of one page, parsed on first use and kept for the
    page's other fields. `body` is the JSON of a JSON response (None otherwise)."""

    __slots__ = ("_doc", "_jsonld", "_scripts", "body")

    def __init__(self, doc: lxml.html.HtmlElement | None, body: Any = None) -> None:
        self._doc = doc
        self.body = body
        self._jsonld: list[dict[str, Any]] | None = None
        self._scripts: dict[str, Any] = {}

    def jsonld(self, wanted: str) -> list[dict[str, Any]]:
        """The page's JSON-LD objects of type `wanted`, in document order."""
        if self._doc is None:
            return _NO_ITEM
        if self._jsonld is None:
            self._jsonld = jsonld_objects(self._doc)
        return [obj for obj in self._jsonld if has_type(obj, wanted)]

    def script(self, name: str) -> Any:
        if self._doc is None:
            return None
        if name not in self._scripts:
            self._scripts[name] = script_object(self._doc, name)
        return self._scripts[name]
