"""The state's generation in replica.db: bumped at each start, and a state
that a master started from the replica has overtaken is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.common.errors import SupersededError
from nadird.master.state.generation import (
    NONE,
    Generation,
    bump_generation,
    check_not_superseded,
    read_generation,
    superseded_while_running,
    supersedes,
)
from nadird.master.state.replica_files import write_manifest


def test_each_start_takes_the_next_generation_beside_the_manifest(tmp_path: Path) -> None:
    path = tmp_path / "replica.db"
    assert read_generation(path) == NONE
    write_manifest(tmp_path, ["frontier.db"])
    assert read_generation(path) == NONE  # a replica.db of an older master
    assert bump_generation(path, "host-a", 10.0) == Generation(1, "host-a", 10.0)
    assert bump_generation(path, "host-b", 20.0) == Generation(2, "host-b", 20.0)
    assert read_generation(path) == Generation(2, "host-b", 20.0)


def test_a_replica_behind_or_level_is_fine_and_one_ahead_is_refused_with_the_way_back() -> None:
    check_not_superseded(Generation(3), Generation(2), "/state", "file:///r")  # unshipped
    check_not_superseded(Generation(3), Generation(3), "/state", "file:///r")
    check_not_superseded(NONE, NONE, "/state", "file:///r")  # a new replica
    with pytest.raises(SupersededError) as caught:
        check_not_superseded(Generation(3), Generation(4, "host-b", 0.0), "/state", "file:///r")
    text = str(caught.value)
    assert "generation 3" in text and "generation 4" in text and "host-b" in text
    assert "nadird restore --force" in text and "/state" in text


def test_a_running_master_is_superseded_by_any_other_masters_generation() -> None:
    own = Generation(4, "host-a", 100.0)
    assert not supersedes(NONE, own)  # a new replica: its first sync is to come
    assert not supersedes(Generation(3, "host-a", 50.0), own)  # own not shipped yet
    assert not supersedes(own, own)
    assert supersedes(Generation(5, "host-b", 200.0), own)  # restored elsewhere
    # Restored elsewhere from a replica that never got this master's start
    # (it began cut off from it): the same number, another master.
    assert supersedes(Generation(4, "host-b", 200.0), own)
    assert supersedes(Generation(4, "host-a", 101.0), own)


def test_the_running_masters_message_names_both_generations_hosts_and_times() -> None:
    text = superseded_while_running(
        Generation(4, "host-a", 0.0), Generation(5, "host-b", 86400.0), "file:///r"
    )
    assert "generation 5, started on host-b at 1970-01-02T00:00:00Z" in text
    assert "generation 4, started on host-a at 1970-01-01T00:00:00Z" in text
    assert "file:///r" in text and "nadird restore --force" in text
