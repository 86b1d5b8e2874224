"""A fast path for building messages from decoded msgpack.

`typecheck.build` walks every value through a generic converter: for a Results
message that is ~50 Python calls per link (each URL and each fingerprint), and
it was a quarter of the master's time. Here each message class gets a builder
compiled once from its type hints, that accepts values of EXACTLY the declared
types (checking a list of str or bytes in one C-level pass) and returns them
as they are. Anything else — a wrong type, an int where a float is declared,
an unknown key, a failed __post_init__ — raises Slow, and the caller runs
`typecheck.build`, which converts what it can and names what it cannot. So
what passes here is exactly what `build` would return; error messages are
`build`'s own.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any, Union, get_args, get_origin

Builder = Callable[[Any], Any]


class Slow(Exception):
    """The fast path cannot vouch for this value: use the full converter.

    Raised as a new instance every time: re-raising one shared instance
    extends its __traceback__, which then holds every frame (and every
    decoded message) it was ever raised from.
    """


_EXACT = (str, bytes, int, float, bool)


# Lists and maps a value declared Any (a page's data, a job) may nest. Typed
# fields nest only as deep as their types; an Any value is the one place a
# hostile frame could hide a deep tree from the fast path.
ANY_DEPTH = 16


def nested_within(value: Any, limit: int) -> bool:
    """True if lists and maps nest at most `limit` levels deep in `value`.

    Level by level, without recursion (a 1,000-deep frame must not raise
    RecursionError here); a container of scalars, like a page's links, is
    passed over in one C-level pass.
    """
    level = [value]
    for _ in range(limit):
        deeper: list[Any] = []
        for container in level:
            items = container.values() if type(container) is dict else container
            kinds = set(map(type, items))
            if list in kinds or dict in kinds:
                deeper.extend(v for v in items if type(v) is list or type(v) is dict)
        if not deeper:
            return True
        level = deeper
    return False


def _free(value: Any) -> Any:
    if (type(value) is list or type(value) is dict) and not nested_within(value, ANY_DEPTH):
        raise Slow
    return value


def _exact(tp: type) -> Builder:
    def check(value: Any) -> Any:
        # `type(...) is`, not isinstance: bool must not pass as int, and an
        # int where a float is declared is left to build(), which converts it.
        if type(value) is not tp:
            raise Slow
        return value

    return check


def _optional(inner: Builder) -> Builder:
    def check(value: Any) -> Any:
        return None if value is None else inner(value)

    return check


def _exact_list(tp: type) -> Builder:
    allowed = {tp}

    def check(value: Any) -> Any:
        if type(value) is not list or not set(map(type, value)) <= allowed:
            raise Slow
        return value

    return check


def _enum(tp: type[enum.Enum]) -> Builder:
    members = {member.value: member for member in tp}
    kind = {type(value) for value in members}

    def check(value: Any) -> Any:
        # Only a value of the members' type (a str, not an int equal to one):
        # anything else, an unknown name too, is left to build() to refuse.
        if type(value) not in kind:
            raise Slow
        member = members.get(value)
        if member is None:
            raise Slow
        return member

    return check


def _list(inner: Builder) -> Builder:
    def check(value: Any) -> Any:
        if type(value) is not list:
            raise Slow
        return [inner(item) for item in value]

    return check


def _dict(key: Builder, val: Builder) -> Builder:
    def check(value: Any) -> Any:
        if type(value) is not dict:
            raise Slow
        if val is _free:
            for k in value:
                key(k)
            if not nested_within(value, ANY_DEPTH):
                raise Slow
            return value
        return {key(k): val(v) for k, v in value.items()}

    return check


@cache
def builder(tp: Any) -> Builder:
    """The fast builder of a type; raises NotImplementedError for types it
    does not handle (the caller then always takes the slow path)."""
    if tp is Any:
        return _free
    if tp in _EXACT:
        return _exact(tp)
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        options = [o for o in get_args(tp) if o is not type(None)]
        # Only `X | None`: with two real options build() tries them in order
        # and may convert (int -> float), which an exact check cannot mirror.
        if len(options) != 1 or len(get_args(tp)) != 2:
            raise NotImplementedError(f"union {tp!r}")
        return _optional(builder(options[0]))
    if origin is list:
        (item,) = get_args(tp)
        if item in (str, bytes, int):
            return _exact_list(item)
        return _list(builder(item))
    if origin is dict:
        key, val = get_args(tp)
        return _dict(builder(key), builder(val))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum(tp)
    raise NotImplementedError(f"type {tp!r}")


def _dataclass(cls: type) -> Builder:
    hints = typing.get_type_hints(cls)
    fields = {f.name: builder(hints[f.name]) for f in dataclasses.fields(cls) if f.init}

    def build(data: Any) -> Any:
        if type(data) is not dict:
            raise Slow
        kwargs = {}
        for name, value in data.items():
            field = fields.get(name)
            if field is None:  # unknown key: build() names it
                raise Slow
            kwargs[name] = field(value)
        try:
            return cls(**kwargs)
        except (ValueError, TypeError):
            raise Slow from None

    return build
