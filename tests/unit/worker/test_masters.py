"""Which master a worker with several listed talks to, and when it gives one up."""

from __future__ import annotations

import pytest

from nadird.common.errors import ConfigError
from nadird.config import config_from_dict
from nadird.worker.masters import MasterChoice

A, B = ("tcp://a:5550", "tcp://a:5551"), ("tcp://b:5550", "tcp://b:5551")


def test_a_single_master_is_never_given_up() -> None:
    choice = MasterChoice([A], timeout=1.0, now=0.0)
    assert not choice.give_up(now=1000.0, last_heard=0.0)


def test_a_silent_master_is_left_for_the_next_in_order_wrapping_round() -> None:
    choice = MasterChoice([A, B], timeout=1.0, now=0.0)
    assert not choice.give_up(now=0.9, last_heard=0.0)
    assert choice.give_up(now=1.0, last_heard=0.0)
    assert choice.next(now=1.0) == B
    # The new one gets its own full wait from when it was chosen.
    assert not choice.give_up(now=1.5, last_heard=0.0)
    assert choice.give_up(now=2.0, last_heard=0.0)
    assert choice.next(now=2.0) == A


def test_a_master_heard_lately_is_kept() -> None:
    choice = MasterChoice([A, B], timeout=1.0, now=0.0)
    assert not choice.give_up(now=10.0, last_heard=9.5)
    assert choice.give_up(now=10.5, last_heard=9.5)


def test_masters_and_results_listed_by_pairs_or_refused_naming_the_key() -> None:
    worker = {"master": [A[0], B[0]], "results": [A[1], B[1]]}
    assert config_from_dict({"worker": worker}, "w.yaml").worker.endpoints() == [A, B]
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"worker": {**worker, "results": A[1]}}, "w.yaml")
    assert caught.value.key == "worker" and "one address per worker.master" in caught.value.expected
    with pytest.raises(ConfigError):
        config_from_dict({"worker": {"master": [], "results": []}}, "w.yaml")


def test_a_master_holding_a_live_connection_is_not_left_for_its_silence() -> None:
    choice = MasterChoice([A, B], timeout=1.0, now=0.0)
    # Connected, not answering yet (a restored master loading its state).
    for now in (0.5, 1.5, 2.5, 3.5):
        assert not choice.give_up(now, last_heard=0.0, connected=True)
    # The connection drops: silent from then on, given up a timeout later.
    assert not choice.give_up(4.0, last_heard=0.0)
    assert choice.give_up(4.5, last_heard=0.0)
