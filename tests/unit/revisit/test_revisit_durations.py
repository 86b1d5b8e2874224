"""Durations as written in config files."""

from __future__ import annotations

import pytest

from nadird.revisit.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("5m", 300),
        ("6h", 21600),
        ("14d", 1209600),
        ("2w", 1209600),
        ("1h30m", 5400),
        ("1d12h", 129600),
        ("1.5h", 5400),
        (" 10m ", 600),
        ("45", 45),
        ("2.5", 2.5),
        (30, 30),
        (0.25, 0.25),
    ],
)
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("soon", "expected a duration like 90s, 5m, 6h, 14d or 1h30m, got 'soon'"),
        ("5", None),
        ("5M", "got '5M'"),
        ("30m1h", "got '30m1h'"),
        ("1h1h", "got '1h1h'"),
        ("1h 30m", "got '1h 30m'"),
        ("h", "got 'h'"),
        ("", "got ''"),
        ("-5m", "got '-5m'"),
        (-5, "expected a duration >= 0, got -5"),
        ("-5", "expected a duration >= 0"),
        (0, "expected a duration > 0, got 0"),
        ("0s", "expected a duration > 0, got '0s'"),
        (float("inf"), "expected a finite duration"),
        (float("nan"), "expected a finite duration"),
        ("inf", "got 'inf'"),
        (True, "got True"),
        (None, "got NoneType None"),
        ([5], "got list"),
    ],
)
def test_bad_durations(value: object, message: str | None) -> None:
    if message is None:
        assert parse_duration(value) == 5
        return
    with pytest.raises(ValueError, match=None) as caught:
        parse_duration(value)
    assert message in str(caught.value)


def test_zero_only_where_allowed() -> None:
    assert parse_duration("0s", allow_zero=True) == 0
    assert parse_duration(0, allow_zero=True) == 0


@pytest.mark.parametrize(
    ("seconds", "text"), [(5400, "1h30m"), (300, "5m"), (1209600, "2w"), (0.5, "0.5s")]
)
def test_format_round_trips(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
    assert parse_duration(text) == seconds
