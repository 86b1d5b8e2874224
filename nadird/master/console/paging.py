"""Paged, server-side sorted tables: the console shows PER_PAGE rows at a time.

A page near the top of a large table (100,000 domains) is taken with
`heapq.nsmallest`, O(n log k) for the k rows up to it, instead of sorting
everything on every request; a page deep in the table sorts once (k is then
close to n, and sorting is faster than a heap that large).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
PER_PAGE = 50
HEAP_SHARE = 4  # a heap while the rows up to the page are under 1/4 of the table


@dataclass(frozen=True)
class Page:
    number: int  # from 1
    per_page: int
    total: int  # rows in the whole table

    @property
    def count(self) -> int:
        return max(1, math.ceil(self.total / self.per_page))

    @property
    def offset(self) -> int:
        return (self.number - 1) * self.per_page

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.count else None


def page_number(query: Mapping[str, str], total: int, per_page: int = PER_PAGE) -> Page:
    """The page a query string asks for (`page=N`), kept within the table."""
    raw = query.get("page", "1")
    number = int(raw) if raw.isdigit() and len(raw) < 10 else 1
    last = max(1, math.ceil(total / per_page))
    return Page(min(max(1, number), last), per_page, total)


def sorted_page(items: Collection[T], key: Callable[[T], Any], page: Page) -> list[T]:
    """The rows of `page` of `items` ordered by `key` (ascending)."""
    upto = page.offset + page.per_page
    if upto * HEAP_SHARE < len(items):
        ordered = heapq.nsmallest(upto, items, key=key)
    else:
        ordered = sorted(items, key=key)
    return ordered[page.offset : upto]
