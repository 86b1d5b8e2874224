"""Reading and checking management API request bodies.

Every way a body can be wrong ends as BadBody with a reason, which the API
answers as 400: not UTF-8, not JSON, NaN or Infinity, nested too deep, a
wrong type, a missing or unknown key. Nothing here raises anything else, so
no body can turn into a 500. (Too large is aiohttp's 413, before reading.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from nadird.config.seeds import seed_of
from nadird.job.request import USER_KEYS, RequestError, RequestSpec

# {"urls": [{"url": ..., "json": {...}}]} is 4 levels before a request's
# own JSON body or meta, which get the rest.
MAX_BODY_DEPTH = 16
MAX_SEEDS_PER_REQUEST = 10_000
SEEDS_SHAPE = (
    '{"urls": ["http://...", {"url": "http://...", "job": "name", "method": "POST", ...}], '
    '"job": "name"}'
)


class BadBody(Exception):
    """The request body cannot be used; the message says why (answered as 400)."""


@dataclass(frozen=True)
class SeedItem:
    index: int  # its place in "urls", so that a client can match refusals
    url: str
    job: str
    request: RequestSpec | None = None  # None: a plain GET of `url`

    def spec(self) -> RequestSpec:
        return self.request if self.request is not None else RequestSpec(self.url)


def _refuse_constant(name: str) -> Any:
    raise BadBody(f"body is not JSON: {name} is not a JSON number")


def parse_json(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadBody(f"body is not UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        # The C decoder recurses once per level: 100,000 nested arrays end here.
        raise BadBody(f"body is nested deeper than {MAX_BODY_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise BadBody(
            f"body is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    if _depth(data) > MAX_BODY_DEPTH:
        raise BadBody(f"body is nested deeper than {MAX_BODY_DEPTH} levels")
    return data


def _depth(data: Any) -> int:
    """Nesting depth of parsed JSON, without recursion (a scalar is 0)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        children: Iterable[Any]
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level)
        if level <= MAX_BODY_DEPTH:  # deeper than the limit: no need to look further
            stack.extend((child, level + 1) for child in children)
    return deepest


def check_keys(data: Any, where: str, allowed: Iterable[str], required: Iterable[str] = ()) -> None:
    if not isinstance(data, dict):
        raise BadBody(f"{where} must be a JSON object, got {_kind(data)}")
    allowed = sorted(allowed)
    for key in data:
        if key not in allowed:
            expected = f"expected one of: {', '.join(allowed)}" if allowed else "expected none"
            raise BadBody(f"unknown key {key!r} in {where}; {expected}")
    for key in required:
        if key not in data:
            raise BadBody(f"{where} lacks the key {key!r}")


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def _string(data: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise BadBody(f"{where}{key} must be a string, got {_kind(value)}")
    return value


async def read_json(request: web.Request) -> Any:
    return parse_json(await request.read())


async def require_no_body(request: web.Request) -> None:
    """Routes that take no body accept none, or an empty object."""
    raw = await request.read()
    if raw.strip():
        check_keys(parse_json(raw), "body", ())


def parse_seeds(body: Any) -> tuple[list[SeedItem], str]:
    """The seeds of a POST /api/seeds body and its default job.

    An item is a URL, or a request {"url": ..., "method": ..., ...} with
    an optional "job" of its own (the forms of `seeds:` in the config file,
    nadird/job/request.py); a request that cannot be sent is a BadBody naming
    the item and the key (`urls[2].headers.X-Token: ...`).
    """
    check_keys(body, "body", ("urls", "job"), required=("urls",))
    job = _string(body, "job", "", "default")
    urls = body["urls"]
    if not isinstance(urls, list):
        raise BadBody(f"urls must be an array, got {_kind(urls)}; expected {SEEDS_SHAPE}")
    if len(urls) > MAX_SEEDS_PER_REQUEST:
        raise BadBody(f"at most {MAX_SEEDS_PER_REQUEST} URLs per request, got {len(urls)}")
    items = []
    for i, item in enumerate(urls):
        if isinstance(item, str):
            items.append(SeedItem(i, item, job))
            continue
        if not isinstance(item, dict):
            raise BadBody(f"urls[{i}] must be a string or an object, got {_kind(item)}")
        items.append(_seed_item(i, item, job))
    return items, job


def _seed_item(index: int, item: dict[str, Any], job: str) -> SeedItem:
    check_keys(item, f"urls[{index}]", (*USER_KEYS, "job"), required=("url",))
    where = f"urls[{index}]."
    url, job = _string(item, "url", where), _string(item, "job", where, job)
    try:
        seed = seed_of({**item, "job": job})
    except RequestError as exc:
        raise BadBody(f"urls[{index}].{exc.key}: {exc.reason}") from None
    return SeedItem(index, url, job, seed.request)
