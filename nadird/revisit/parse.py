"""Build a RevisitPolicy from plain config data, naming the key of any error.

Errors are ConfigError(source, key, expected) with the full dotted key, e.g.
`jobs.shop.revisit.adaptive.min: expected a duration like ..., got 'soon'`,
so the wiring that loads a job passes its own prefix and the file name.
"""

from __future__ import annotations

import re
from typing import Any

from nadird.common.errors import ConfigError
from nadird.revisit.cron import check_expression, zone
from nadird.revisit.durations import format_duration, parse_duration
from nadird.revisit.policy import Adaptive, Cron, Fixed, RevisitPolicy, Rule, Schedule

SCHEDULE_KEYS = ("every", "jitter", "adaptive", "cron", "timezone")
_KINDS = ("every", "adaptive", "cron")
_TOP_KEYS = (*SCHEDULE_KEYS, "rules", "default", "expire")
_RULE_KEYS = ("match", "never", *SCHEDULE_KEYS)
_ADAPTIVE_KEYS = ("min", "max", "initial")


def _mapping(data: Any, key: str, source: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ConfigError(source, key, f"expected a mapping, got {type(data).__name__}")
    for name in data:
        if name not in allowed:
            raise ConfigError(
                source, f"{key}.{name}", f"unknown key (expected one of: {', '.join(allowed)})"
            )
    return data


def _duration(data: dict[str, Any], name: str, key: str, source: str) -> float:
    try:
        return parse_duration(data[name])
    except ValueError as exc:
        raise ConfigError(source, f"{key}.{name}", str(exc)) from None


def _text(data: dict[str, Any], name: str, key: str, source: str) -> str:
    value = data[name]
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(source, f"{key}.{name}", f"expected a non-empty string, got {value!r}")
    return value


def _fixed(data: dict[str, Any], key: str, source: str) -> Fixed:
    every = _duration(data, "every", key, source)
    jitter = data.get("jitter", 0.0)
    if isinstance(jitter, bool) or not isinstance(jitter, int | float) or not 0 <= jitter < 1:
        raise ConfigError(
            source, f"{key}.jitter", f"expected a fraction in [0, 1) like 0.1, got {jitter!r}"
        )
    return Fixed(every=every, jitter=float(jitter))


def _adaptive(data: Any, key: str, source: str) -> Adaptive:
    spec = _mapping(data, key, source, _ADAPTIVE_KEYS)
    for name in ("min", "max"):
        if name not in spec:
            raise ConfigError(source, f"{key}.{name}", "required (a duration like 5m)")
    low = _duration(spec, "min", key, source)
    high = _duration(spec, "max", key, source)
    if high < low:
        raise ConfigError(
            source, f"{key}.max", f"expected a duration >= min ({format_duration(low)})"
        )
    initial = _duration(spec, "initial", key, source) if "initial" in spec else None
    if initial is not None and not low <= initial <= high:
        raise ConfigError(source, f"{key}.initial", "expected a duration within [min, max]")
    return Adaptive(min=low, max=high, initial=initial)


def _cron(data: dict[str, Any], key: str, source: str) -> Cron:
    expr = _text(data, "cron", key, source)
    name = _text(data, "timezone", key, source) if "timezone" in data else "UTC"
    try:
        tz = zone(name)
    except ValueError as exc:
        raise ConfigError(source, f"{key}.timezone", str(exc)) from None
    try:
        check_expression(expr, tz)
    except ValueError as exc:
        raise ConfigError(source, f"{key}.cron", f"{exc}, got {expr!r}") from None
    return Cron(expr=expr, timezone=name)


def _schedule(data: dict[str, Any], key: str, source: str) -> Schedule:
    """The one schedule named in `data` (every, adaptive or cron, with their options)."""
    kinds = [k for k in _KINDS if k in data]
    if len(kinds) != 1:
        found = ", ".join(kinds) or "none"
        raise ConfigError(source, key, f"expected exactly one of every, adaptive, cron ({found})")
    for option, needs in (("jitter", "every"), ("timezone", "cron")):
        if option in data and needs not in data:
            raise ConfigError(source, f"{key}.{option}", f"only allowed with {needs}")
    if kinds[0] == "every":
        return _fixed(data, key, source)
    if kinds[0] == "adaptive":
        return _adaptive(data["adaptive"], f"{key}.adaptive", source)
    return _cron(data, key, source)


def _rule(data: Any, key: str, source: str) -> Rule:
    spec = _mapping(data, key, source, _RULE_KEYS)
    if "match" not in spec:
        raise ConfigError(source, f"{key}.match", "required (a regular expression on the URL)")
    pattern = _text(spec, "match", key, source)
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ConfigError(
            source, f"{key}.match", f"expected a regular expression ({exc})"
        ) from None
    never = spec.get("never", False)
    if not isinstance(never, bool):
        raise ConfigError(source, f"{key}.never", f"expected true or false, got {never!r}")
    if never:
        extra = [k for k in SCHEDULE_KEYS if k in spec]
        if extra:
            raise ConfigError(source, f"{key}.{extra[0]}", "not allowed with never: true")
        return Rule(pattern=compiled, schedule=None)
    return Rule(pattern=compiled, schedule=_schedule(spec, key, source))


def _rules(data: Any, key: str, source: str) -> tuple[Rule, ...]:
    if not isinstance(data, list):
        raise ConfigError(source, key, f"expected a list of rules, got {type(data).__name__}")
    return tuple(_rule(item, f"{key}[{i}]", source) for i, item in enumerate(data))


def parse_revisit(data: Any, key: str = "revisit", source: str = "(config)") -> RevisitPolicy:
    """The policy in a job's `revisit:` mapping (shapes in policy.py's docstring)."""
    spec = _mapping(data, key, source, _TOP_KEYS)
    expire = _duration(spec, "expire", key, source) if "expire" in spec else None
    direct = [k for k in SCHEDULE_KEYS if k in spec]
    if direct and ("rules" in spec or "default" in spec):
        raise ConfigError(
            source, f"{key}.{direct[0]}", "with rules or default, put it under default:"
        )
    rules = _rules(spec["rules"], f"{key}.rules", source) if "rules" in spec else ()
    default: Schedule | None = None
    if "default" in spec:
        default_spec = _mapping(spec["default"], f"{key}.default", source, SCHEDULE_KEYS)
        default = _schedule(default_spec, f"{key}.default", source)
    elif direct:
        default = _schedule(spec, key, source)
    if not rules and default is None and expire is None:
        raise ConfigError(source, key, "expected every, adaptive, cron, rules or expire")
    return RevisitPolicy(rules=rules, default=default, expire=expire)


def revisit_policy_of(
    revisit: dict[str, Any] | None, expire: str | float | None, key: str, source: str
) -> RevisitPolicy | None:
    """The policy of a job's `revisit:` and `expire:` keys (`key` is the
    revisit key's full name, e.g. jobs.shop.revisit)."""
    if revisit is None and expire is None:
        return None
    data = dict(revisit or {})
    if expire is not None:
        if "expire" in data:
            raise ConfigError(source, f"{key}.expire", "given twice (also as the job's expire:)")
        data["expire"] = expire
    if revisit is None:
        key = key.rsplit(".", 1)[0] + ".expire" if "." in key else "expire"
        try:
            return parse_revisit(data, "", source)
        except ConfigError as exc:
            raise ConfigError(source, key, exc.expected) from None
    return parse_revisit(data, key, source)
