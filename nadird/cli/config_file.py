"""Which keys a config file names: a value the file sets wins over a
command's own default, one it leaves out does not (`nadird crawl -c FILE`
keeps its own store and a temporary state directory unless FILE names them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nadird.config.yaml_strict import load_strict


def file_sets(path: str | None, dotted: str) -> bool:
    """Whether the config file at `path` (already loaded, so valid) names `dotted`."""
    if path is None:
        return False
    data: Any = load_strict(Path(path).read_text(encoding="utf-8"))
    for key in dotted.split("."):
        if not isinstance(data, dict) or key not in data:
            return False
        data = data[key]
    return True
