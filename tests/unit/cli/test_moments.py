"""`--since TIME` of export and reextract: the spellings the help and the README name."""

from __future__ import annotations

import argparse
import time

import pytest

from nadird.cli.argtypes import moment


@pytest.mark.parametrize(
    ("text", "ago"),
    [("6h", 21600), ("6h ago", 21600), ("1h30m ago", 5400), ("90s  AGO", 90), ("0s", 0)],
)
def test_a_duration_with_or_without_ago_is_that_long_before_now(text: str, ago: float) -> None:
    before = time.time()
    when = moment(text)
    assert before - ago - 1 <= when <= time.time() - ago


@pytest.mark.parametrize(
    ("text", "epoch"),
    [
        ("1796119500", 1796119500.0),
        ("2026-12-01T10:05:00Z", 1796119500.0),
        ("2026-12-01T10:05:00", 1796119500.0),  # UTC without a zone
        ("2026-12-01T11:05:00+01:00", 1796119500.0),
    ],
)
def test_epochs_and_iso_times(text: str, epoch: float) -> None:
    assert moment(text) == epoch


@pytest.mark.parametrize("text", ["yesterday", "ago", "6h later", "-1h ago", "5 m ago", ""])
def test_anything_else_is_refused_naming_the_forms(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="6h ago") as caught:
        moment(text)
    assert repr(text) in str(caught.value)
