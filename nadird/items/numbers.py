"""Numbers from scraped text: prices and counts as real numbers.

Focused code rather than price-parser (PyPI, last release 2026-03, ~10 us a
value): price-parser reads most of these inputs right, but it has no 万/亿
multipliers and it guesses where it should refuse ("1.234,56.78" comes back
as some number), while a field processor must say why a value is not a
number. What is read here:

* full-width digits and signs (NFKC: "１２３４" "￥" "，"), currency signs and
  words around the number ("价格：2,499元", "€ 12,50", "USD 3.99");
* thousands separators "," "." " " (also no-break and thin spaces) and "'"
  ("1'234.50", Swiss), groups of three (and the Indian 2-digit groups);
* the decimal separator: with both "." and "," the last one is decimal
  ("2.499,00" and "2,499.00" are both 2499); a single separator followed by
  exactly three digits is a thousands separator ("2,499", "1.234"), anything
  else is decimal ("12,5", "0.123"); `decimal` fixes it for a job;
* 万 (10^4), 亿 (10^8) and 千 (10^3) right after the number ("1.2万" = 12000);
* a leading minus ("-", "−").

The first number in the text is taken. Integral results are ints, others
floats. Nothing here raises anything but NumberError.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

MAX_DIGITS = 30  # more than any price or count; beyond it the value is refused
_MULTIPLIERS = {"万": 10**4, "亿": 10**8, "千": 10**3}
_GROUP_SPACES = " \u00a0\u202f\u2009'\u2019"
# A number: space- or apostrophe-grouped digits, or digits with . and ,
_TOKEN = re.compile(
    r"\d{1,3}(?:[ \u00a0\u202f\u2009'\u2019]\d{3})+(?!\d)(?:[.,]\d+)?"
    r"|\d[\d.,]*"
    r"|(?<!\d)\.\d+"  # "$.99"
)
_MINUS = ("-", "\u2212")


class NumberError(ValueError):
    """Why a text is not a number."""


def normalize(text: str) -> str:
    """Full-width forms to ASCII (NFKC), keeping the CJK multipliers."""
    return unicodedata.normalize("NFKC", text)


def parse_number(text: str, decimal: str | None = None) -> int | float:
    """The first number in `text`, or NumberError saying why there is none."""
    clean = normalize(text)
    match = _TOKEN.search(clean)
    if match is None:
        raise NumberError(f"no number in {text!r:.60}")
    token = match.group().rstrip(".,")
    for space in _GROUP_SPACES:
        token = token.replace(space, "")
    value = _decimal_of(token, decimal)
    multiplier = _MULTIPLIERS.get(clean[match.end() : match.end() + 1].strip() or "", 1)
    value *= multiplier
    before = clean[: match.start()].rstrip(" ¥$€£")
    # A minus sign, not a hyphen: "-$5", "€ -3", but not "SKU-5".
    if before.endswith(_MINUS) and not before[:-1][-1:].isalnum():
        value = -value
    return _as_python(value, text)


def _decimal_of(token: str, decimal: str | None) -> Decimal:
    digits = sum(c.isdigit() for c in token)
    if digits > MAX_DIGITS:
        raise NumberError(f"more than {MAX_DIGITS} digits")
    separator = decimal if decimal is not None else _decimal_separator(token)
    group = {".": ",", ",": "."}.get(separator or "", "")
    if separator is not None and token.count(separator) > 1:
        raise NumberError(f"two decimal separators in {token!r}")
    whole, _, fraction = token.partition(separator) if separator else (token, "", "")
    if group and group in fraction:
        raise NumberError(f"a thousands separator after the decimal one in {token!r}")
    if group and group in whole:
        _check_groups(whole.split(group), token)
    try:
        return Decimal(f"{whole.replace(group, '') if group else whole}.{fraction or '0'}")
    except InvalidOperation:
        raise NumberError(f"not a number: {token!r}") from None


def _decimal_separator(token: str) -> str | None:
    dots, commas = token.count("."), token.count(",")
    if dots and commas:
        return "." if token.rfind(".") > token.rfind(",") else ","
    if dots + commas == 0:
        return None
    sep = "." if dots else ","
    if dots + commas > 1:
        return "," if sep == "." else "."  # repeated: it groups thousands
    whole, _, fraction = token.partition(sep)
    if len(fraction) == 3 and whole != "0":
        return "," if sep == "." else "."  # "2,499": thousands
    return sep


def _check_groups(groups: list[str], token: str) -> None:
    """1,234,567 or the Indian 12,34,567: the last group three digits, the
    middle ones all two or all three, the first one to three."""
    first, *middle, last = groups
    sizes = {len(g) for g in middle}
    if not (1 <= len(first) <= 3 and len(last) == 3 and sizes in (set(), {2}, {3})):
        raise NumberError(f"misplaced thousands separators in {token!r}")


def _as_python(value: Decimal, text: str) -> int | float:
    if value == value.to_integral_value():
        return int(value)
    result = float(value)
    if result in (float("inf"), float("-inf")):
        raise NumberError(f"out of range: {text!r:.60}")
    return result
