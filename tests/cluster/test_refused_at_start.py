"""What a master, `nadird crawl` and `nadird check` refuse before anything
runs: an unusable state directory, a secret the environment does not hold.
Each is one line naming the file, the key and the path, and exit status 2
(which a service manager's RestartPreventExitStatus=2 does not restart)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli_helpers import nadird

pytestmark = pytest.mark.slow

UNSET = "NADIRD_TEST_SURELY_UNSET"


def unusable_dirs(tmp_path: Path) -> dict[str, str]:
    regular = tmp_path / "a-file"
    regular.write_text("not a directory\n")
    return {"under-a-file": str(regular / "state"), "proc": "/proc/nadird-state"}


def one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("{")]
    assert len(lines) == 1, stderr[-3000:]
    return lines[0]


@pytest.mark.parametrize("where", ["under-a-file", "proc"])
def test_a_master_with_an_unusable_state_dir_exits_2_naming_key_and_path(
    tmp_path: Path, where: str
) -> None:
    state = unusable_dirs(tmp_path)[where]
    config = tmp_path / "master.yaml"
    config.write_text(
        f"master:\n  state_dir: {state}\n  bind: tcp://127.0.0.1:0\n"
        "  results_bind: tcp://127.0.0.1:0\n"
        f"store:\n  uri: sqlite:///{tmp_path / 'pages.db'}\napi:\n  port: 0\n"
    )
    for argv in (["--role", "master", "-c", str(config)], ["check", "-c", str(config)]):
        proc = nadird(*argv, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr[-3000:]
        line = one_error_line(proc.stderr)
        assert line.startswith(f"nadird: error: {config}: master.state_dir: a writable directory")
        assert state in line


def test_crawl_refuses_an_unusable_state_dir_from_either_place(tmp_path: Path) -> None:
    dirs = unusable_dirs(tmp_path)
    store = ["--store", f"sqlite:///{tmp_path / 'c.db'}"]
    proc = nadird("crawl", "http://a.test/", "--state-dir", dirs["under-a-file"], *store)
    assert proc.returncode == 2
    says = "nadird: error: (command line): --state-dir: a writable directory, but "
    assert one_error_line(proc.stderr).startswith(says + dirs["under-a-file"])
    config = tmp_path / "c.yaml"
    config.write_text(f"master:\n  state_dir: {dirs['proc']}\n")
    proc = nadird("crawl", "http://a.test/", "-c", str(config), *store)
    assert proc.returncode == 2
    assert one_error_line(proc.stderr).startswith(
        f"nadird: error: {config}: master.state_dir: a writable directory, but {dirs['proc']}"
    )


def test_check_leaves_a_usable_state_dir_as_it_found_it(tmp_path: Path) -> None:
    config = tmp_path / "master.yaml"
    config.write_text(f"master:\n  state_dir: {tmp_path / 'new' / 'state'}\n")
    proc = nadird("check", "-c", str(config))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["master.yaml"]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (
            "alerts:\n  channels:\n    ops: {type: webhook, url: 'https://hooks.example/x', "
            f"secret_env: {UNSET}}}\n",
            "alerts.channels.ops.secret_env",
        ),
        (f"api:\n  token_env: {UNSET}\n", "api.token_env"),
        (
            "fetch:\n  proxies:\n    providers:\n      - {url: 'https://p.example/list', "
            f"secret_env: {UNSET}}}\n",
            "fetch.proxies.providers[0].secret_env",
        ),
    ],
)
def test_check_reports_a_secret_whose_variable_is_unset(
    tmp_path: Path, text: str, key: str
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(text)
    env = {k: v for k, v in os.environ.items() if k != UNSET}
    proc = nadird("check", "-c", str(config), env=env)
    assert proc.returncode == 2, proc.stdout
    assert one_error_line(proc.stderr) == (
        f"nadird: error: {config}: {key}: environment variable {UNSET} is not set"
    )
    # Set, it passes (a token long enough for the API).
    proc = nadird("check", "-c", str(config), env={**env, UNSET: "x" * 20})
    assert proc.returncode == 0, proc.stderr
