"""Long `... IN (?, ?, ...)` lists for SQLite, sent a slice at a time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

# Values per statement: well under SQLite's bound on parameters (32,766
# since 3.32, 999 before), and large enough that a batch is a few statements.
IN_CHUNK = 500
_T = TypeVar("_T")


def in_chunks(items: Sequence[_T]) -> Iterator[tuple[Sequence[_T], str]]:
    """Slices of at most IN_CHUNK items, each with the '?,?,...' its IN (...) needs."""
    for at in range(0, len(items), IN_CHUNK):
        chunk = items[at : at + IN_CHUNK]
        yield chunk, ",".join("?" * len(chunk))
