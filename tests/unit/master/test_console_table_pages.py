"""Paging of the console's tables: a page is the slice of the sorted table, its number
stays within the table."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nadird.master.console.paging import Page, page_number, sorted_page


@given(
    st.lists(st.integers(0, 50), max_size=400),
    st.integers(1, 30),
    st.sampled_from([1, 7, 50]),
)
def test_a_page_is_the_slice_of_the_sorted_table(values: list[int], number: int, size: int) -> None:
    page = page_number({"page": str(number)}, len(values), size)
    key = lambda v: (-v[1], v[0])  # noqa: E731
    items = list(enumerate(values))
    assert sorted_page(items, key, page) == sorted(items, key=key)[page.offset : page.offset + size]


def test_page_numbers_stay_within_the_table() -> None:
    assert page_number({"page": "3"}, 120) == Page(3, 50, 120)
    assert page_number({"page": "4"}, 120).number == 3
    assert page_number({"page": "0"}, 120).number == 1
    assert page_number({"page": "-2"}, 120).number == 1
    assert page_number({"page": "9" * 40}, 120).number == 1
    assert page_number({}, 0) == Page(1, 50, 0)
    assert Page(1, 50, 0).count == 1 and Page(1, 50, 0).next is None
    assert Page(2, 50, 120).previous == 1 and Page(2, 50, 120).next == 3
