"""An item's business key: what makes pages under different URLs one item.

A job's `item_key` is either a list of field names (the values those fields
have after the schema's processors) or `{url_regex: PATTERN}` (group 1 of the
pattern, searched in the URL, then in the URL after redirects). Two pages of
a job with the same key are the same item: the store keeps one keyed item
per (job, key) (see store/items.py).

A page that is not an item (no field matched anything: a listing) gets no
key and no complaint. An item whose key cannot be made (a key field without
a value, one that failed the schema, a value that is not a string or an
integer, a URL the pattern does not match) keeps no key: it is marked
invalid like any item that fails its schema, the reason under
`_errors.item_key`, so the master counts it (`invalid_items`) and the store
never files it under an empty key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nadird.items.schema import ERRORS, VALID

KEY_ERROR = "item_key"  # its name in an item's `_errors`
# Longer keys are refused: a key is indexed (MongoDB bounds index entries)
# and travels on the wire with every page.
MAX_KEY_CHARS = 512


@dataclass(frozen=True)
class UrlKey:
    """`item_key: {url_regex: PATTERN}`: the key is group 1, searched in the URL."""

    url_regex: str


@dataclass(frozen=True)
class KeyRule:
    """A compiled `item_key`: exactly one of `fields` and `url_regex` is set."""

    fields: tuple[str, ...] = ()
    url_regex: re.Pattern[str] | None = None


def compile_key(item_key: list[str] | UrlKey | None) -> KeyRule | None:
    """The rule of a job's `item_key` (a list of names, or an object with
    `url_regex`); None without one. ValueError('item_key...') when it is wrong."""
    if item_key is None:
        return None
    if isinstance(item_key, list):
        if not item_key:
            raise ValueError("item_key: expected at least one field name")
        if len(set(item_key)) != len(item_key):
            raise ValueError("item_key: a field is named twice")
        return KeyRule(fields=tuple(item_key))
    pattern = item_key.url_regex
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"item_key.url_regex: invalid regex {pattern!r}: {exc}") from None
    if compiled.groups < 1:
        raise ValueError(f"item_key.url_regex: {pattern!r} needs a group (the key is group 1)")
    return KeyRule(url_regex=compiled)


def is_item(data: Mapping[str, Any]) -> bool:
    """Whether any field matched: a page where none did is not an item."""
    return any(
        value is not None and value != "" and value != []
        for name, value in data.items()
        if not name.startswith("_")
    )


def apply_key(rule: KeyRule | None, url: str, final_url: str, data: dict[str, Any]) -> str | None:
    """The item's key; None without a rule, for a page that is not an item,
    or when the key cannot be made (then `data` is marked invalid, with why)."""
    key, reason = key_of(rule, url, final_url, data)
    if reason is not None:
        mark_invalid(data, reason)
    return key


def key_of(
    rule: KeyRule | None, url: str, final_url: str, data: Mapping[str, Any]
) -> tuple[str | None, str | None]:
    """(the item's key, why there is none) without touching `data`: (None,
    None) without a rule or for a page that is not an item. The master
    makes it again from what a worker sent, to compare with the worker's."""
    if rule is None or not is_item(data):
        return None, None
    return _key_of(rule, url, final_url, data)


def mark_invalid(data: dict[str, Any], reason: str) -> None:
    """Mark the item invalid for its key, with why (under `_errors.item_key`)."""
    data[VALID] = False
    errors = data.get(ERRORS)
    if not isinstance(errors, dict):
        errors = data[ERRORS] = {}
    errors[KEY_ERROR] = reason


def _key_of(
    rule: KeyRule, url: str, final_url: str, data: Mapping[str, Any]
) -> tuple[str | None, str | None]:
    if rule.url_regex is not None:
        for where in (url, final_url):
            found = rule.url_regex.search(where)
            if found is not None and found.group(1):
                return _bounded(found.group(1))
        return None, f"url_regex {rule.url_regex.pattern!r} does not match {url!r:.200}"
    failed = data.get(ERRORS) if data.get(VALID) is False else None
    parts: list[str | int] = []
    for name in rule.fields:
        value = data.get(name)
        if isinstance(failed, dict) and name in failed:
            return None, f"{name} failed its schema ({failed[name]})"
        if isinstance(value, str):
            value = value.strip()
        if value is None or value == "":
            return None, f"{name} has no value"
        if not isinstance(value, str | int) or isinstance(value, bool):
            return None, f"{name} is not a string or an integer: {value!r:.60}"
        parts.append(value)
    if len(parts) == 1:
        return _bounded(str(parts[0]))
    return _bounded(json.dumps(parts, ensure_ascii=False, separators=(",", ":")))


def _bounded(key: str) -> tuple[str | None, str | None]:
    if len(key) > MAX_KEY_CHARS:
        return None, f"the key is longer than {MAX_KEY_CHARS} characters"
    return key, None
