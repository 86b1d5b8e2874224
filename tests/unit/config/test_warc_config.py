"""The warc: section: what a config file may say, and the error (file, key,
what was expected) when it says something else."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.common.errors import ConfigError
from nadird.config import load_config


def load(tmp_path: Path, warc: str) -> ConfigError | None:
    path = tmp_path / "c.yaml"
    path.write_text("warc:\n" + warc)
    try:
        load_config(path)
    except ConfigError as exc:
        return exc
    return None


def test_a_warc_section_takes_its_defaults(tmp_path: Path) -> None:
    assert load(tmp_path, "  dir: /srv/archive\n  description: shop prices\n") is None
    warc = load_config(tmp_path / "c.yaml").warc
    assert warc is not None and warc.dir == "/srv/archive"
    assert (warc.max_size, warc.prefix, warc.required) == (1_000_000_000, "nadird", False)
    assert load_config(_write(tmp_path, "log_level: info\n")).warc is None  # no section: no archive


@pytest.mark.parametrize(
    ("body", "key", "said"),
    [
        ("  max_size: 10\n", "warc", "dir"),
        ("  dir: a\n  prefix: ../up\n", "warc", "prefix: letters"),
        ("  dir: a\n  prefix: .hidden\n", "warc", "prefix"),
        ("  dir: a\n  max_size: 0\n", "warc", "max_size must be > 0"),
        ("  dir: a\n  max_body_bytes: -1\n", "warc", "max_body_bytes must be > 0"),
        ("  dir: a\n  requird: true\n", "warc.requird", "unknown key"),
        ("  dir: a\n  required: maybe\n", "warc.required", "expected"),
        ("  dir: ''\n", "warc", "dir: a directory"),
        ("  dir: a\n  gzip_level: 0\n", "warc", "gzip_level must be 1 to 9"),
    ],
)
def test_a_wrong_warc_section_names_the_file_the_key_and_what_was_expected(
    tmp_path: Path, body: str, key: str, said: str
) -> None:
    error = load(tmp_path, body)
    assert error is not None, body
    assert error.source == str(tmp_path / "c.yaml") and error.key == key
    assert said in error.expected


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plain.yaml"
    path.write_text(text)
    return path
