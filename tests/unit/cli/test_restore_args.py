"""`nadird restore` refuses what it cannot do before it runs Litestream."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.cli import restore
from nadird.common.errors import ConfigError
from nadird.config import Config, MasterConfig


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


def test_without_replica_option_the_config_file_names_it_or_the_error_names_the_key(
    tmp_path: Path,
) -> None:
    config = Config(master=MasterConfig(state_dir=str(tmp_path / "state")))
    with pytest.raises(ConfigError) as caught:
        restore.sources(None, None, config, "master.yaml")
    assert (caught.value.source, caught.value.key) == ("master.yaml", "master.replica")
    with pytest.raises(ConfigError) as caught:
        restore.sources(None, str(tmp_path), None, None)
    assert caught.value.key == "--replica" and "-c FILE" in caught.value.expected


def test_the_config_files_state_dir_is_named_when_it_refuses_it(tmp_path: Path) -> None:
    (tmp_path / "frontier.db").write_bytes(b"old")
    master = MasterConfig(state_dir=str(tmp_path), replica="file:///nowhere/replica")
    url, state_dir, where = restore.sources(None, None, Config(master=master), "m.yaml")
    assert (url, state_dir) == ("file:///nowhere/replica", str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        restore.run(url, state_dir, force=False, where=where)
    assert (caught.value.source, caught.value.key) == ("m.yaml", "master.state_dir")
    # The options win over the file.
    assert restore.sources("file:///r", "/elsewhere", Config(master=master), "m.yaml")[:2] == (
        "file:///r",
        "/elsewhere",
    )


def test_a_restored_database_is_checked_by_sqlite(tmp_path: Path) -> None:
    import sqlite3

    from nadird.cli.restore_report import quick_check

    good = tmp_path / "good.db"
    db = sqlite3.connect(good)
    db.execute("CREATE TABLE t (x)")
    db.executemany("INSERT INTO t VALUES (?)", [(str(i) * 50,) for i in range(1000)])
    db.commit()
    db.close()
    assert quick_check(good) == "ok"
    torn = tmp_path / "torn.db"
    data = good.read_bytes()
    torn.write_bytes(data[:8192] + b"\x00" * (len(data) - 8192))  # its later pages lost
    assert quick_check(torn) != "ok"
