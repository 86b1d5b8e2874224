"""A field's processors: steps run in order on the worker after selection.

A step is a name (`strip`, `first`, `number`...) or a one-key mapping naming
the step and its argument (`regex: 'ID (\\d+)'`, `replace: {pattern: ',', with: ''}`).
`compile_steps` checks a job's steps once (the config loader calls it, so a bad
step exits 2); `run_steps` applies them and never raises: a value a step cannot
convert stops the chain with the reason, and the value as it was before that
step is kept.

On a list (a `multiple` selector) every step but join, first and default
applies to each element.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any
from urllib.parse import urljoin, urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from nadird.items.dates import DateError, parse_datetime
from nadird.items.numbers import NumberError, parse_number

_TRUE = {"true", "yes", "y", "1", "on", "是", "有", "有货", "in stock", "available"}
_FALSE = {"false", "no", "n", "0", "off", "否", "无", "无货", "缺货", "out of stock", "sold out"}


class StepError(ValueError):
    """A value a step cannot convert (the reason is the message)."""


@dataclass(frozen=True)
class Context:
    """What a step may need about the page: its URL and the fetch time."""

    page_url: str
    fetched_at: float


Apply = Callable[[Any, Context], Any]


@dataclass(frozen=True)
class Step:
    name: str
    apply: Apply
    on_list: bool  # takes the whole list (join, first, default), not each element


def _strip(value: Any, ctx: Context) -> Any:
    return " ".join(str(value).split())


def _regex(arg: Any) -> Apply:
    pattern, group = (
        (arg.get("pattern"), arg.get("group")) if isinstance(arg, dict) else (arg, None)
    )
    if not isinstance(pattern, str):
        raise ValueError("regex: expected a pattern string or {pattern, group}")
    compiled = _compile_regex(pattern, "regex")
    taken = group if group is not None else (1 if compiled.groups else 0)
    if not isinstance(taken, int) or not 0 <= taken <= compiled.groups:
        raise ValueError(f"regex: group {taken!r} not in the pattern (it has {compiled.groups})")

    def apply(value: Any, ctx: Context) -> Any:
        found = compiled.search(str(value))
        if found is None or found.group(taken) is None:
            raise StepError(f"regex: no match in {str(value)!r:.60}")
        return found.group(taken)

    return apply


def _compile_regex(pattern: str, step: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{step}: invalid regex {pattern!r}: {exc}") from None


def _replace(arg: Any) -> Apply:
    if not isinstance(arg, dict) or set(arg) != {"pattern", "with"}:
        raise ValueError("replace: expected {pattern: REGEX, with: TEXT}")
    compiled = _compile_regex(str(arg["pattern"]), "replace")
    replacement = str(arg["with"])
    try:
        compiled.sub(replacement, "")  # a bad group reference fails here, not per page
    except (re.error, IndexError) as exc:
        raise ValueError(f"replace: invalid replacement {replacement!r}: {exc}") from None
    return lambda value, ctx: compiled.sub(replacement, str(value))


def _join(arg: Any) -> Apply:
    separator = " " if arg is None else arg
    if not isinstance(separator, str):
        raise ValueError("join: expected a separator string")

    def apply(value: Any, ctx: Context) -> Any:
        items = value if isinstance(value, list) else [value]
        return separator.join(str(v) for v in items if v is not None)

    return apply


def _first(value: Any, ctx: Context) -> Any:
    if not isinstance(value, list):
        return value
    return next((v for v in value if v not in (None, "")), None)


def _number(arg: Any) -> Apply:
    decimal = arg.get("decimal") if isinstance(arg, dict) else arg
    if decimal not in (None, ".", ","):
        raise ValueError("number: decimal must be '.' or ','")

    def apply(value: Any, ctx: Context) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        try:
            return parse_number(str(value), decimal)
        except NumberError as exc:
            raise StepError(f"number: {exc}") from None

    return apply


def _integer(arg: Any) -> Apply:
    number = _number(arg)

    def apply(value: Any, ctx: Context) -> Any:
        found = number(value, ctx)
        if isinstance(found, float):
            raise StepError(f"integer: not a whole number: {found}")
        return found

    return apply


def _boolean(value: Any, ctx: Context) -> Any:
    if isinstance(value, bool):
        return value
    word = " ".join(str(value).lower().split())
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise StepError(f"boolean: not a yes/no value: {str(value)!r:.60}")


def _datetime(arg: Any) -> Apply:
    options = arg if isinstance(arg, dict) else {}
    if (arg is not None and not isinstance(arg, dict)) or set(options) - {"tz", "order"}:
        raise ValueError("datetime: expected {tz: IANA zone, order: mdy | dmy}")
    zone = _zone(options.get("tz", "UTC"))
    order = options.get("order", "mdy")
    if order not in ("mdy", "dmy"):
        raise ValueError("datetime: order must be mdy or dmy")

    def apply(value: Any, ctx: Context) -> Any:
        fetched = datetime.fromtimestamp(ctx.fetched_at, UTC)
        try:
            return parse_datetime(str(value), fetched, zone, order).isoformat()
        except DateError as exc:
            raise StepError(f"datetime: {exc}") from None

    return apply


def _zone(name: Any) -> tzinfo:
    if not isinstance(name, str):
        raise ValueError("datetime: tz must be an IANA zone name")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"datetime: unknown time zone {name!r}") from None


def _url(value: Any, ctx: Context) -> Any:
    absolute = urljoin(ctx.page_url, str(value).strip())
    parts = urlsplit(absolute)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise StepError(f"url: not an http(s) URL: {absolute!r:.80}")
    return absolute


def _default(arg: Any) -> Apply:
    return lambda value, ctx: arg if value in (None, "", []) else value


_PLAIN: dict[str, Apply] = {"strip": _strip, "first": _first, "boolean": _boolean, "url": _url}
_WITH_ARG: dict[str, Callable[[Any], Apply]] = {
    "regex": _regex,
    "replace": _replace,
    "join": _join,
    "number": _number,
    "integer": _integer,
    "datetime": _datetime,
    "default": _default,
}
_ARG_OPTIONAL = {"join", "number", "integer", "datetime"}
_ON_LIST = {"join", "first", "default"}
NAMES = sorted({*_PLAIN, *_WITH_ARG})


def compile_step(spec: Any) -> Step:
    """One step from its declaration; ValueError saying what is wrong."""
    if isinstance(spec, str):
        name, arg, given = spec, None, False
    elif isinstance(spec, dict) and len(spec) == 1:
        ((name, arg),) = spec.items()
        given = True
    else:
        raise ValueError("expected a processor name or a one-key mapping {name: argument}")
    if name in _PLAIN:
        if given and arg is not None:
            raise ValueError(f"{name} takes no argument")
        return Step(name, _PLAIN[name], name in _ON_LIST)
    if name not in _WITH_ARG:
        raise ValueError(f"unknown processor {name!r}; expected one of: {', '.join(NAMES)}")
    if not given and name not in _ARG_OPTIONAL:
        raise ValueError(f"{name} needs an argument ({name}: ...)")
    return Step(name, _WITH_ARG[name](arg), name in _ON_LIST)


def compile_steps(specs: list[Any]) -> tuple[Step, ...]:
    steps = []
    for i, spec in enumerate(specs):
        try:
            steps.append(compile_step(spec))
        except ValueError as exc:
            raise ValueError(f"process[{i}]: {exc}") from None
    return tuple(steps)


def run_steps(value: Any, steps: tuple[Step, ...], ctx: Context) -> tuple[Any, str | None]:
    """(value, None), or (the value before the failing step, its reason)."""
    for step in steps:
        try:
            if step.on_list or not isinstance(value, list):
                value = None if value is None and not step.on_list else step.apply(value, ctx)
            else:
                value = [step.apply(v, ctx) for v in value]
        except StepError as exc:
            return value, str(exc)
        except Exception as exc:  # a step must never stop the page: recorded instead
            return value, f"{step.name}: {type(exc).__name__}: {exc}"
    return value, None
