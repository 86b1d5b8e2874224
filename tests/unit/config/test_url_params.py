"""Tracking and session parameters: a second pass after canonicalize."""

from __future__ import annotations

import pytest

from nadird.common.urls import ParamStripper, canonicalize
from nadird.config import DEFAULT_STRIP_PARAMS

strip = ParamStripper(DEFAULT_STRIP_PARAMS)


def clean(url: str) -> str:
    return strip(canonicalize(url))


SAME = [
    ("http://a.test/p?utm_source=x&utm_medium=y", "http://a.test/p"),
    ("http://a.test/p?id=3&UTM_Campaign=z", "http://a.test/p?id=3"),
    ("http://a.test/p?gclid=1&fbclid=2&msclkid=3&id=3", "http://a.test/p?id=3"),
    ("http://a.test/p?id=3&PHPSESSID=abc", "http://a.test/p?id=3"),
    ("http://a.test/p;jsessionid=ABC123?id=3", "http://a.test/p?id=3"),
    ("http://a.test/p;JSESSIONID=ABC123", "http://a.test/p"),
    ("http://a.test/p?sid=77&b=2&a=1", "http://a.test/p?a=1&b=2"),
    ("http://A.TEST:80/p?_ga=1&aspsessionidqq=2#frag", "http://a.test/p"),
    ("http://a.test/p?mc_cid=1&mc_eid=2&yclid=3&_gl=4&igshid=5", "http://a.test/p"),
    ("http://a.test/p?", "http://a.test/p"),
]
APART = [
    ("http://a.test/p?id=3", "http://a.test/p?id=4"),
    ("http://a.test/p?utm=1", "http://a.test/p"),  # 'utm' is not 'utm_*'
    ("http://a.test/p?sidebar=1", "http://a.test/p"),  # 'sid' matches whole names only
    ("http://a.test/p;v=2", "http://a.test/p"),  # other path parameters stay
    ("http://a.test/p?session=1", "http://a.test/p"),
]


@pytest.mark.parametrize(("url", "expected"), SAME)
def test_tracking_variants_collapse(url: str, expected: str) -> None:
    assert clean(url) == expected
    assert clean(expected) == expected  # idempotent: stays canonical


@pytest.mark.parametrize(("one", "other"), APART)
def test_different_pages_stay_apart(one: str, other: str) -> None:
    assert clean(one) != clean(other)


def test_no_patterns_is_the_identity_and_canonicalize_is_untouched() -> None:
    url = canonicalize("http://a.test/p?utm_source=x")
    assert url == "http://a.test/p?utm_source=x"  # the hot path strips nothing
    assert ParamStripper([])(url) == url
    assert ParamStripper(["ref"])("http://a.test/p?REF=1&x=2") == "http://a.test/p?x=2"
