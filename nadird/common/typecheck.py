"""Strict conversion of plain data (YAML, msgpack) into typed dataclasses.

Both the config loader and the message codec need the same thing: take a tree
of dicts/lists/scalars, check every value against a dataclass's type hints,
refuse unknown keys, and say exactly where a value is wrong. One small
walker serves both, so the two can never disagree on what a type means.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from functools import cache
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

T = TypeVar("T")


class Mismatch(Exception):
    """A value does not fit its declared type. `path` is dotted, e.g. jobs.a.fields.t[0]."""

    def __init__(self, path: str, expected: str) -> None:
        self.path = path
        self.expected = expected
        super().__init__(f"{path}: {expected}")


@cache
def _spec(cls: Any) -> tuple[dict[str, Any], frozenset[str]]:
    """Type hints and init field names of a dataclass, computed once per class."""
    names = frozenset(f.name for f in dataclasses.fields(cls) if f.init)
    return typing.get_type_hints(cls), names


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(tp: Any) -> str:
    if tp is type(None):
        return "null"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "one of " + ", ".join(repr(m.value) for m in tp)
    if isinstance(tp, type):
        return "mapping" if dataclasses.is_dataclass(tp) else tp.__name__
    # What a YAML file can hold, not Python's spelling (dict[str, Any]).
    origin = get_origin(tp)
    if origin is dict:
        return "mapping"
    if origin in (list, tuple):
        return "list"
    return str(tp).replace("typing.", "")


def _convert_union(value: Any, tp: Any, path: str) -> Any:
    options = get_args(tp)
    if value is None and type(None) in options:
        return None
    built = [o for o in options if isinstance(o, type) and dataclasses.is_dataclass(o)]
    if isinstance(value, dict) and len(built) == 1:
        # A mapping can only be meant as that section (an optional one, or
        # `when: any | {below: ...}`): its own error is the useful one.
        return convert(value, built[0], path)
    for option in options:
        if option is type(None):
            continue
        try:
            return convert(value, option, path)
        except Mismatch:
            continue
    names = " or ".join(_describe(o) for o in options)
    raise Mismatch(path, f"expected {names}, got {type(value).__name__} {value!r:.60}")


def _convert_scalar(value: Any, tp: type, path: str) -> Any:
    # bool is a subclass of int: `port: true` must not pass as a number.
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, tp) and not (tp is int and isinstance(value, bool)):
        return value
    raise Mismatch(path, f"expected {tp.__name__}, got {type(value).__name__} {value!r:.60}")


def _convert_enum(value: Any, tp: type[enum.Enum], path: str) -> Any:
    """A member from its value: a name outside the enum is refused, not kept."""
    for member in tp:
        if type(value) is type(member.value) and value == member.value:
            return member
    raise Mismatch(path, f"expected {_describe(tp)}, got {value!r:.60}")


def convert(value: Any, tp: Any, path: str = "") -> Any:
    """Check `value` against type `tp`, building dataclasses from mappings."""
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return _convert_union(value, tp, path)
    if origin is Literal:
        if value in get_args(tp):
            return value
        choices = ", ".join(repr(a) for a in get_args(tp))
        raise Mismatch(path, f"expected one of {choices}, got {value!r:.60}")
    if origin is list:
        if not isinstance(value, list):
            raise Mismatch(path, f"expected a list, got {type(value).__name__}")
        (item_tp,) = get_args(tp)
        return [convert(v, item_tp, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise Mismatch(path, f"expected a mapping, got {type(value).__name__}")
        key_tp, val_tp = get_args(tp)
        return {
            convert(k, key_tp, path): convert(v, val_tp, _join(path, str(k)))
            for k, v in value.items()
        }
    if tp is Any:
        return value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return build(tp, value, path)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _convert_enum(value, tp, path)
    if isinstance(tp, type):
        return _convert_scalar(value, tp, path)
    raise Mismatch(path, f"unsupported type {tp!r}")


def build(cls: type[T], data: Any, path: str = "") -> T:
    """Build dataclass `cls` from a mapping; unknown keys are errors."""
    if not isinstance(data, dict):
        raise Mismatch(path or "(top level)", f"expected a mapping, got {type(data).__name__}")
    klass: Any = cls  # functools.cache wants a Hashable; a class is one
    hints, names = _spec(klass)
    unknown = [k for k in data if k not in names]
    if unknown:
        allowed = ", ".join(sorted(names))
        raise Mismatch(_join(path, str(unknown[0])), f"unknown key; expected one of: {allowed}")
    kwargs = {k: convert(v, hints[k], _join(path, k)) for k, v in data.items()}
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        raise Mismatch(path or "(top level)", str(exc)) from exc
