"""CSV export for spreadsheets and programs, against a real SQLite store:
every field round-trips through Python's csv module, encodings, --fields."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import export_csv_helpers
from support.export_csv_helpers import CHINESE

store_file = export_csv_helpers.store_file


@pytest.mark.slow
def test_stdout_gets_the_byte_order_mark_too(store_file: Path) -> None:
    command = [sys.executable, "-m", "nadird", "export", "--store", f"sqlite:///{store_file}"]
    proc = subprocess.run(
        [*command, "--format", "csv", "--encoding", "utf-8-sig", "--fields", "url,title"],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"\xef\xbb\xbfurl,title\n")
    assert CHINESE.encode() in proc.stdout
