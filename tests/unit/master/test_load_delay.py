"""NADIRD_STATE_LOAD_DELAY: a master's state load made slow for tests."""

from __future__ import annotations

import pytest

from nadird.common.errors import ConfigError
from nadird.master.state.load_delay import DELAY_ENV, load_delay


def test_unset_or_blank_means_no_delay() -> None:
    assert load_delay({}) == 0.0
    assert load_delay({DELAY_ENV: " "}) == 0.0
    assert load_delay({DELAY_ENV: "2.5"}) == 2.5


@pytest.mark.parametrize("raw", ["abc", "-1", "nan", "inf"])
def test_a_value_that_is_no_delay_names_the_variable(raw: str) -> None:
    with pytest.raises(ConfigError, match=DELAY_ENV):
        load_delay({DELAY_ENV: raw})
