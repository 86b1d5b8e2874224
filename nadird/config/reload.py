"""What changed between two configs, and which of it can change live."""

from __future__ import annotations

import dataclasses
from typing import Any

from nadird.config import Config


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted keys for every leaf of a config (lists are leaves)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value}


def changes(old: Config, new: Config) -> dict[str, tuple[Any, Any]]:
    before, after = flatten(old), flatten(new)
    return {
        key: (before.get(key), after.get(key))
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    }


def needs_restart(key: str, live: tuple[str, ...]) -> bool:
    """True unless the key is, or is under, one of the live-changeable prefixes."""
    return not any(key == p or key.startswith(p + ".") for p in live)
