"""argparse types for numeric options, shared by every subcommand.

float() accepts "nan" and "inf": NaN passes every range comparison (so
`--delay nan` would mean no delay at all) and infinity waits forever, so a
float option takes finite numbers only.
"""

from __future__ import annotations

import argparse
import math


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    value = finite_float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def comma_list(text: str) -> list[str]:
    """`a,b,c` as ["a", "b", "c"]; blanks around names are ignored."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected names separated by commas, got {text!r}")
    return names
