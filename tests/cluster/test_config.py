import sys
from pathlib import Path

import pytest
from support.config_helpers import write

from nadird.testing import forkserver


@pytest.mark.slow
def test_the_daemon_exits_2_with_one_clear_line(tmp_path: Path) -> None:
    path = write(tmp_path, "worker:\n  bags: -1\n")
    proc = forkserver.run(
        [sys.executable, "-m", "nadird", "--role", "worker", "-c", str(path)], timeout=60
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert str(path) in lines[0] and "worker" in lines[0] and "bags must be > 0" in lines[0]


# --- non-finite numbers ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "-1"])
def test_crawl_delay_option_refuses_non_finite_and_negative(value: str) -> None:
    proc = forkserver.run(
        [sys.executable, "-m", "nadird", "crawl", f"--delay={value}", "http://a.test/"], timeout=60
    )
    assert proc.returncode == 2
    assert "argument --delay: expected a finite number" in proc.stderr


# --- duplicate keys ------------------------------------------------------------


@pytest.mark.slow
def test_a_duplicate_section_exits_2_with_one_line(tmp_path: Path) -> None:
    path = write(tmp_path, "worker:\n  bags: 2\nworker:\n  bags: 3\n")
    proc = forkserver.run(
        [sys.executable, "-m", "nadird", "--role", "worker", "-c", str(path)], timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"nadird: error: {path}: line 3: each key once per mapping: "
        "duplicate key 'worker' (first at line 1)"
    )
