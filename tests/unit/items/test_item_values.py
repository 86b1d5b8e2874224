"""Number, date and whitespace processors over real-looking scraped strings.

Each row is a string as a shop or news page shows it, with the value a user
expects to load. The fuzz tests hold the processors to their promise: a
value they cannot read is a per-field error, never an exception.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nadird.items.dates import DateError, parse_datetime
from nadird.items.numbers import NumberError, parse_number
from nadird.items.processors import Context, compile_steps, run_steps

NUMBERS: list[tuple[str, int | float]] = [
    # Chinese shops
    ("￥3,999", 3999),
    ("¥3,999.00", 3999),
    ("价格：2,499元", 2499),
    ("售价 ¥ 1,299.50 起", 1299.5),
    ("¥1.2万", 12000),
    ("月销 3.5万+", 35000),
    ("成交额 12亿", 1200000000),
    ("１２３４元", 1234),
    ("￥１，２３４．５０", 1234.5),
    ("已售 8千", 8000),
    ("库存：0", 0),
    # English
    ("$2,499.00", 2499),
    ("$19.99", 19.99),
    ("USD 1,234,567.89", 1234567.89),
    ("£12", 12),
    ("Price: $0.99 each", 0.99),
    ("-$5.00", -5),
    ("Refund: -€3,50", -3.5),
    ("Model X-5", 5),
    ("1,024 reviews", 1024),
    ("3.5 out of 5", 3.5),
    ("0.123", 0.123),
    ("$.99", 0.99),
    # European
    ("2.499,00 €", 2499),
    ("€ 12,50", 12.5),
    ("1.234.567,89 €", 1234567.89),
    ("1 234,5", 1234.5),
    ("1\u00a0234,50 €", 1234.5),
    ("1\u202f999 €", 1999),
    ("CHF 1'234.50", 1234.5),
    ("12,5 %", 12.5),
    ("1.234", 1234),
    # India
    ("₹1,23,456", 123456),
]

BAD_NUMBERS = ["call us", "", "¥--", "1.234,56.78", "1,2,3", "2,49,9", "9" * 40]

NOW = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)  # 12:00 in Shanghai
SHANGHAI = ZoneInfo("Asia/Shanghai")

DATES: list[tuple[str, str]] = [
    ("2026年11月30日 10:05", "2026-11-30T10:05:00+08:00"),
    ("2026年11月30日", "2026-11-30T00:00:00+08:00"),
    ("2026年1月5日 下午3:05", "2026-01-05T15:05:00+08:00"),
    ("11月30日 08:00", "2026-11-30T08:00:00+08:00"),
    ("3小时前", "2026-12-01T09:00:00+08:00"),
    ("5分钟前", "2026-12-01T11:55:00+08:00"),
    ("2天前", "2026-11-29T12:00:00+08:00"),
    ("昨天", "2026-11-30T00:00:00+08:00"),
    ("昨天 10:05", "2026-11-30T10:05:00+08:00"),
    ("前天 23:59", "2026-11-29T23:59:00+08:00"),
    ("刚刚", "2026-12-01T12:00:00+08:00"),
    (" 2026-11-30 10:05 ", "2026-11-30T10:05:00+08:00"),
    ("2026-11-30T10:05:00Z", "2026-11-30T10:05:00+00:00"),
    ("2026-11-30T10:05:00+01:00", "2026-11-30T10:05:00+01:00"),
    ("2026/11/30 10:05:30", "2026-11-30T10:05:30+08:00"),
    ("2 days ago", "2026-11-29T12:00:00+08:00"),
    ("an hour ago", "2026-12-01T11:00:00+08:00"),
    ("yesterday", "2026-11-30T00:00:00+08:00"),
    ("Nov 30, 2026", "2026-11-30T00:00:00+08:00"),
    ("November 30, 2026 10:05 PM", "2026-11-30T22:05:00+08:00"),
    ("30 November 2026", "2026-11-30T00:00:00+08:00"),
    ("11/30/2026", "2026-11-30T00:00:00+08:00"),
    ("Mon, 30 Nov 2026 10:05:00 GMT", "2026-11-30T10:05:00+00:00"),
    ("30.11.2026 10:05", "2026-11-30T10:05:00+08:00"),
    ("30/11/2026", "2026-11-30T00:00:00+08:00"),
    ("1796000000", "2026-11-30T00:53:20+00:00"),
]

BAD_DATES = [
    "",
    "soon",
    "2026-13-40",
    "2026年2月30日",
    "25:00 昨天",
    "99999-01-01",
    "Smarch 3, 2026",
]

WHITESPACE: list[tuple[str, str]] = [
    ("  Blue  Kettle \n", "Blue Kettle"),
    ("\t2026-11-30\u00a0 10:05 ", "2026-11-30 10:05"),
    ("电热\u3000水壶", "电热 水壶"),
    ("a\r\n\r\nb", "a b"),
    ("   ", ""),
    ("single", "single"),
]


@pytest.mark.parametrize(("text", "expected"), NUMBERS)
def test_number_reads_prices_and_counts(text: str, expected: float) -> None:
    value = parse_number(text)
    assert value == expected
    assert isinstance(value, int) == isinstance(expected, int)


def test_decimal_option_settles_the_ambiguous_three_digits() -> None:
    assert parse_number("1.234") == 1234
    assert parse_number("1.234", decimal=".") == 1.234
    assert parse_number("2,499", decimal=",") == 2.499


@pytest.mark.parametrize("text", BAD_NUMBERS)
def test_number_refuses_what_is_not_one(text: str) -> None:
    with pytest.raises(NumberError):
        parse_number(text)


@pytest.mark.parametrize(("text", "expected"), DATES)
def test_datetime_reads_common_and_relative_dates(text: str, expected: str) -> None:
    assert parse_datetime(text, NOW, SHANGHAI).isoformat() == expected


@pytest.mark.parametrize("text", BAD_DATES)
def test_datetime_refuses_what_is_not_one(text: str) -> None:
    with pytest.raises(DateError):
        parse_datetime(text, NOW, SHANGHAI)


def test_day_first_order_is_a_job_choice() -> None:
    assert parse_datetime("03/04/2026", NOW).month == 3
    assert parse_datetime("03/04/2026", NOW, order="dmy").month == 4


@pytest.mark.parametrize(("text", "expected"), WHITESPACE)
def test_strip_collapses_whitespace(text: str, expected: str) -> None:
    steps = compile_steps(["strip"])
    assert run_steps(text, steps, Context("http://shop.test/", 0.0)) == (expected, None)


def test_table_has_enough_rows() -> None:
    assert len(NUMBERS) + len(DATES) + len(WHITESPACE) >= 40


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("0123456789０１.,，． '-−¥￥$€万亿千abc元\u00a0"), max_size=40)
)
def test_number_never_raises_but_number_error(text: str) -> None:
    try:
        value = parse_number(text)
    except NumberError:
        return
    assert isinstance(value, (int, float))


@settings(max_examples=400, deadline=None)
@given(
    st.text(max_size=40)
    | st.from_regex(r"\d{1,6}[-/.年]\d{1,3}[-/.月]\d{1,3}日? ?\d{0,3}:?\d{0,3}")
)
def test_datetime_never_raises_but_date_error(text: str) -> None:
    try:
        value = parse_datetime(text, NOW, SHANGHAI)
    except DateError:
        return
    assert value.tzinfo is not None


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=30), st.lists(st.text(max_size=10), max_size=4)))
def test_a_chain_of_every_processor_never_raises(value: object) -> None:
    steps = compile_steps(
        ["strip", {"regex": r"(\d\S*)"}, {"replace": {"pattern": "x", "with": ""}}, "number"]
    )
    for chain in (steps, compile_steps(["first", "integer"]), compile_steps(["boolean"])):
        for more in (
            compile_steps([{"datetime": {"tz": "Asia/Shanghai"}}]),
            compile_steps(["url"]),
        ):
            run_steps(value, chain + more, Context("http://shop.test/a/", 1.8e9))
