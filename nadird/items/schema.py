"""A job's schema: each field's processors, type and `required`, checked per item.

An item (a page's `data`) that passes is stored as the processors left it,
with nothing added. One that does not keeps its fields and gets three keys:

* `_valid: false`;
* `_errors: {field: reason}`: a processor that could not convert the value
  ("number: no number in 'call us'"), a required field without a value
  ("required: no value"), a type mismatch after processing
  ("type: expected number, got string 'n/a'");
* `_raw: {field: selected}`: what the selectors matched, for each field in
  `_errors` whose kept value differs from it.

A page on which no field of the schema matched anything (a listing, a
category page) is not an item: its data is left as selected, unchecked.

The failed field keeps the value it had before the step that failed, so a
stripped "call us" is still there to read. The master counts invalid items
per job and field (/api/stats `invalid_items`, /metrics `nadird_invalid_items`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from nadird.items.processors import Context, Step, compile_steps, run_steps

VALID, ERRORS, RAW = "_valid", "_errors", "_raw"
FIELD_TYPES = ("string", "number", "integer", "boolean", "datetime", "url", "list")


@dataclass(frozen=True)
class FieldRule:
    name: str
    steps: tuple[Step, ...]
    type: str | None
    required: bool


def compile_rules(schema: Mapping[str, Any]) -> tuple[FieldRule, ...]:
    """Rules from a job's schema (FieldSpec by name); ValueError('schema.NAME...')."""
    rules = []
    for name, spec in schema.items():
        try:
            steps = compile_steps(list(spec.process))
        except ValueError as exc:
            raise ValueError(f"schema.{name}.{exc}") from None
        rules.append(FieldRule(name, steps, spec.type, spec.required))
    return tuple(rules)


def apply_rules(data: dict[str, Any], rules: tuple[FieldRule, ...], ctx: Context) -> dict[str, Any]:
    """The item with every rule applied, and the _valid/_errors/_raw keys if it fails."""
    if all(data.get(rule.name) is None for rule in rules):
        return data  # no field matched: a listing or other page, not an item
    errors: dict[str, str] = {}
    raw: dict[str, Any] = {}
    for rule in rules:
        selected = data.get(rule.name)
        value, reason = run_steps(selected, rule.steps, ctx)
        if reason is None:
            reason = check_value(value, rule.type, rule.required)
        data[rule.name] = value
        if reason is not None:
            errors[rule.name] = reason
            if value != selected:
                raw[rule.name] = selected
    if errors:
        data[VALID] = False
        data[ERRORS] = errors
        if raw:
            data[RAW] = raw
    return data


def invalid_fields(data: Mapping[str, Any]) -> list[str]:
    """The fields an item failed on (none for a valid item)."""
    errors = data.get(ERRORS) if data.get(VALID) is False else None
    return sorted(str(k) for k in errors) if isinstance(errors, dict) else []


def check_value(value: Any, expected: str | None, required: bool) -> str | None:
    if value is None or value == "" or value == []:
        return "required: no value" if required else None
    if expected is None or _is(value, expected):
        return None
    return f"type: expected {expected}, got {_kind(value)} {value!r:.60}"


def _is(value: Any, expected: str) -> bool:
    if expected == "string":
        return isinstance(value, str)
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "list":
        return isinstance(value, list)
    if not isinstance(value, str):
        return False
    if expected == "url":
        parts = urlsplit(value)
        return parts.scheme in ("http", "https") and bool(parts.netloc)
    try:  # datetime: an ISO 8601 string, as the datetime processor writes
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _kind(value: Any) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "list"}
    return names.get(type(value), type(value).__name__)
