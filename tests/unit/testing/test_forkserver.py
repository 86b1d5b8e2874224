"""The fork server runs `nadird` as `python -m nadird` would: same output,
exit status, working directory and environment, and its children answer
as a subprocess.Popen does (poll, wait with a timeout, a signal's status)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from nadird.testing import forkserver
from nadird.testing.cluster import Cluster, wait_until

pytestmark = pytest.mark.slow
NADIRD = [sys.executable, "-m", "nadird"]


def both(
    monkeypatch: pytest.MonkeyPatch, command: list[str], cwd: Path
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """The command forked, then from a new interpreter."""
    forked = forkserver.run(command, cwd=cwd)
    monkeypatch.setenv(forkserver.SPAWN_ENV, "1")
    spawned = forkserver.run(command, cwd=cwd)
    monkeypatch.delenv(forkserver.SPAWN_ENV)
    return forked, spawned


def test_a_forked_command_says_and_exits_what_a_new_interpreter_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A relative path: found only in the working directory given.
    (tmp_path / "bad.yaml").write_text("worker:\n  bags: -1\n")
    forked, spawned = both(monkeypatch, [*NADIRD, "check", "-c", "bad.yaml"], tmp_path)
    assert forked.returncode == spawned.returncode == 2
    assert forked.stderr == spawned.stderr and "bad.yaml: worker: bags must be > 0" in forked.stderr
    assert forked.stdout == spawned.stdout == ""
    (tmp_path / "good.yaml").write_text("worker:\n  bags: 2\n")
    forked, spawned = both(monkeypatch, [*NADIRD, "check", "-c", "good.yaml"], tmp_path)
    assert forked.returncode == spawned.returncode == 0
    assert forked.stderr == spawned.stderr == ""
    # The default node name ends with the process's own pid.
    said = "good.yaml: ok (1 jobs, 0 seeds, node "
    assert forked.stdout.startswith(said) and spawned.stdout.startswith(said)


def test_only_nadird_commands_are_forked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a python -m nadird command"):
        forkserver.run(["ls", str(tmp_path)])


def test_a_forked_daemon_answers_poll_wait_and_signals_as_a_popen(cluster: Cluster) -> None:
    master = cluster.start(
        "master", "master", cluster.master_config(master={"exit_when_done": False})
    )
    assert master.log_path.exists()  # before the child opened it, as with Popen
    assert wait_until(lambda: '"master_started"' in master.log_path.read_text(), 30)
    assert master.popen.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        master.popen.wait(0.2)
    master.kill(signal.SIGTERM)
    assert cluster.wait(master, 30) == 0  # its own clean stop
    assert '"master_stopped"' in master.log_path.read_text()
    again = cluster.start_again("master", cluster.workdir / "master.yaml")
    assert wait_until(lambda: master.log_path.read_text().count('"master_started"') == 2, 30)
    again.kill(signal.SIGKILL)
    assert cluster.wait(again, 10) == -signal.SIGKILL
    assert again.popen.returncode == -signal.SIGKILL
