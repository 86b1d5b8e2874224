"""The values of a request in the user shape (nadird/job/request.py): text
without control characters, canonical JSON, and bodies in canonical form.

Form fields are sorted by name (the values of one name keep their order:
a[]=2&a[]=1 is not a[]=1&a[]=2), JSON gets sorted keys and no spaces, and a
raw body of a JSON or form type is checked and made canonical the same way.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

FORM_TYPE = "application/x-www-form-urlencoded"
JSON_TYPE = "application/json"
# A bound that keeps a bag (up to bag_size requests) far below a frame's limit.
MAX_BODY_BYTES = 256 * 1024
# Control characters but tab; a newline would end the header (request splitting).
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


class RequestError(ValueError):
    """A request the crawler will not send; `key` is where it is wrong."""

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        self.reason = reason
        super().__init__(f"{key}: {reason}")


def media_type(content_type: str) -> str:
    return content_type.partition(";")[0].strip().lower()


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def string_of(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise RequestError(key, f"expected a string, got {kind_of(value)}")
    return value


def mapping_of(value: Any, key: str) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise RequestError(key, f"expected a mapping, got {kind_of(value)}")
    return value


def text_of(value: Any, key: str, limit: int) -> str:
    text = string_of(value, key)
    if _CONTROL.search(text):
        raise RequestError(key, "holds a newline or another control character")
    if len(text) > limit:
        raise RequestError(key, f"longer than {limit} characters")
    return text


def canonical_json(value: Any, key: str, limit: int) -> bytes:
    """Canonical JSON (sorted keys, no spaces); RequestError if not JSON."""
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:  # a non-str key, a set, NaN...
        raise RequestError(key, f"not JSON: {exc}") from None
    encoded = text.encode()
    if len(encoded) > limit:
        raise RequestError(key, f"more than {limit} bytes")
    return encoded


def body_of(data: Mapping[str, Any], method: str) -> tuple[bytes, str]:
    """(canonical body, content type) of whichever of json, form, body is given."""
    given = [k for k in ("json", "form", "body") if k in data]
    if len(given) > 1:
        raise RequestError(given[1], f"give one of json, form or body (also {given[0]})")
    content_type = data.get("content_type")
    if content_type is not None:
        content_type = text_of(content_type, "content_type", 256)
    if not given:
        if content_type is not None:
            raise RequestError("content_type", "only with body or json")
        return b"", ""
    if method == "HEAD":
        raise RequestError(given[0], "a HEAD request has no body")
    if given[0] == "json":
        if content_type is not None and not is_json(content_type):
            raise RequestError("content_type", f"a JSON type with json, got {content_type!r}")
        return canonical_json(data["json"], "json", MAX_BODY_BYTES), content_type or JSON_TYPE
    if given[0] == "form":
        if content_type is not None:
            raise RequestError("content_type", f"form bodies are {FORM_TYPE}")
        return _form(data["form"]), FORM_TYPE
    if content_type is None:
        raise RequestError("content_type", "required with body")
    return _raw_body(string_of(data["body"], "body"), content_type), content_type


def is_json(content_type: str) -> bool:
    media = media_type(content_type)
    return media == JSON_TYPE or media.endswith("+json")


def _form(value: Any) -> bytes:
    pairs: list[tuple[str, str]] = []
    for name, given in mapping_of(value, "form").items():
        where = f"form.{name}"
        if not isinstance(name, str):
            raise RequestError(where, "a field name is a string")
        for item in given if isinstance(given, list) else [given]:
            pairs.append((name, _form_value(item, where)))
    return _sorted_form(pairs, "form")


def _form_value(value: Any, key: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return str(value)
    raise RequestError(key, f"expected a string, a number or a list of them, got {kind_of(value)}")


def _sorted_form(pairs: list[tuple[str, str]], key: str) -> bytes:
    # Stable: the values of one name keep their order (a[]=2&a[]=1 is not a[]=1&a[]=2).
    encoded = urlencode(sorted(pairs, key=lambda pair: pair[0])).encode()
    if len(encoded) > MAX_BODY_BYTES:
        raise RequestError(key, f"more than {MAX_BODY_BYTES} bytes")
    return encoded


def _raw_body(text: str, content_type: str) -> bytes:
    """A raw body; one of a JSON or form type is checked and made canonical."""
    if is_json(content_type):
        try:
            value = json.loads(text, parse_constant=_no_constant)
        except ValueError as exc:
            raise RequestError("body", f"not valid JSON for {content_type}: {exc}") from None
        return canonical_json(value, "body", MAX_BODY_BYTES)
    if media_type(content_type) == FORM_TYPE:
        return _sorted_form(parse_qsl(text, keep_blank_values=True), "body")
    encoded = text.encode()
    if len(encoded) > MAX_BODY_BYTES:
        raise RequestError("body", f"more than {MAX_BODY_BYTES} bytes")
    return encoded


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


# ------------------------------------------------------ fields of a body
def body_fields(body: bytes, content_type: str) -> dict[str, Any] | None:
    """A form body's fields (a name's first value) or a JSON object body's
    keys; None for any other body (a paginated walk cannot change it)."""
    media = media_type(content_type)
    try:
        if media == FORM_TYPE:
            fields: dict[str, Any] = {}
            for name, value in parse_qsl(body.decode(), keep_blank_values=True):
                fields.setdefault(name, value)
            return fields
        if is_json(content_type):
            value = json.loads(body)
            return value if isinstance(value, dict) else None
    except ValueError:  # a peer's body that is not what its type says
        return None
    return None


def with_body_field(body: bytes, content_type: str, name: str, value: Any) -> bytes:
    """The canonical body with field `name` set to `value` (added if absent);
    the body must be one body_fields reads."""
    if media_type(content_type) == FORM_TYPE:
        pairs = [(k, v) for k, v in parse_qsl(body.decode(), keep_blank_values=True) if k != name]
        return _sorted_form([*pairs, (name, str(value))], "body")
    return canonical_json({**json.loads(body), name: value}, "body", MAX_BODY_BYTES)
