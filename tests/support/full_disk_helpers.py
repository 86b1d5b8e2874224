"""A clock the full-disk tests set by hand."""

from __future__ import annotations


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t
