"""master.replica and its companions: what a config file may say, and the
error (file, key, what was expected) when it says something else."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.common.errors import ConfigError
from nadird.config import load_config


def load(tmp_path: Path, master: str) -> ConfigError | None:
    path = tmp_path / "c.yaml"
    path.write_text("master:\n" + master)
    try:
        load_config(path)
    except ConfigError as exc:
        return exc
    return None


@pytest.mark.parametrize(
    "url",
    [
        "file:///mnt/replica/nadird",
        "s3://bucket/nadird/prod",
        "s3://nadird/prod?endpoint=minio.internal:9000",
        "sftp://backup@host.example/srv/nadird",
        "gs://bucket/nadird",
        "abs://container/nadird",
    ],
)
def test_replica_urls_litestream_takes_load(tmp_path: Path, url: str) -> None:
    assert load(tmp_path, f"  replica: {url}\n") is None
    assert load_config(tmp_path / "c.yaml").master.replica == url


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://host/path", "scheme one of file, s3, gs, abs, sftp"),
        ("/mnt/replica", "got scheme none"),
        ("file://mnt/replica", "three slashes"),
        ("file:///", "three slashes"),
        ("s3:///path", "names a bucket"),
        ("s3://bucket", "a path under bucket"),
        ("sftp://user:secret@host/path", "without a password"),
        ("sftp://user@host/path?key=x", "without ?query"),
        ("s3://bucket/path?secret=x", "query takes endpoint"),
        ("s3://bucket/path#x", "without ?query or #fragment"),
    ],
)
def test_a_wrong_replica_url_names_the_file_the_key_and_what_was_expected(
    tmp_path: Path, url: str, said: str
) -> None:
    error = load(tmp_path, f"  replica: '{url}'\n")
    assert error is not None
    assert error.source == str(tmp_path / "c.yaml") and error.key == "master"
    assert error.expected.startswith("replica:") and said in error.expected


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("replica_max_lag: 0", "replica_max_lag must be > 0"),
        ("replica_sync_interval: -1", "replica_sync_interval must be > 0"),
        ("replica: 42", "expected"),
    ],
)
def test_lag_and_interval_must_be_positive(tmp_path: Path, line: str, said: str) -> None:
    error = load(tmp_path, f"  {line}\n")
    assert error is not None and said in str(error)


def test_no_replica_by_default() -> None:
    from nadird.config import MasterConfig

    master = MasterConfig()
    assert master.replica is None and master.replica_max_lag == 60.0


def test_each_database_goes_at_the_end_of_the_path_before_the_query() -> None:
    from nadird.config.replica import replica_of

    assert replica_of("file:///mnt/r/", "frontier.db") == "file:///mnt/r/frontier.db"
    assert (
        replica_of("s3://nadird/prod?endpoint=minio:9000", "replica.db")
        == "s3://nadird/prod/replica.db?endpoint=minio:9000"
    )


def test_an_sftp_key_goes_with_an_sftp_replica_and_into_litestreams_config(
    tmp_path: Path,
) -> None:
    from nadird.master.state.replica_files import litestream_config

    sftp = "  replica: sftp://backup@host.example/srv/nadird\n"
    assert load(tmp_path, sftp + "  replica_sftp_key: /etc/nadird/keys/replica\n") is None
    error = load(tmp_path, "  replica: s3://b/p\n  replica_sftp_key: /k\n")
    assert error is not None and "only with an sftp://" in error.expected
    error = load(tmp_path, sftp + "  replica_sftp_key: keys/replica\n")
    assert error is not None and "absolute path" in error.expected
    text = litestream_config(tmp_path, "sftp://b@h/p", ["frontier.db"], 1.0, "/k")
    assert "key-path: /k" in text and "url: sftp://b@h/p/frontier.db" in text
