"""`nadird restore` refuses what it cannot do before it runs Litestream."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.cli import restore
from nadird.common.errors import ConfigError


def test_a_directory_holding_files_is_refused_without_force(tmp_path: Path) -> None:
    (tmp_path / "frontier.db").write_bytes(b"old")
    with pytest.raises(ConfigError) as caught:
        restore.run("file:///nowhere/replica", str(tmp_path), force=False)
    assert caught.value.key == "--state-dir" and "frontier.db" in caught.value.expected
    assert (tmp_path / "frontier.db").read_bytes() == b"old"


def test_a_wrong_replica_url_is_refused_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        restore.run("http://host/x", str(tmp_path / "new"), force=False)
    assert caught.value.key == "--replica" and "scheme" in caught.value.expected
    assert not (tmp_path / "new").exists()


def test_a_file_in_place_of_the_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("x")
    with pytest.raises(ConfigError) as caught:
        restore.run("file:///nowhere/replica", str(tmp_path / "state"), force=True)
    assert caught.value.key == "--state-dir"
