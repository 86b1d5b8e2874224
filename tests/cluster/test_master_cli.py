"""A running master and the command line around it: ports in use, the API token, pipes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli_helpers import nadird

from nadird.testing.cluster import Cluster, wait_until

pytestmark = pytest.mark.slow

TOKEN_VAR = "NADIRD_TEST_API_TOKEN"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_idle_master(cluster: Cluster, name: str, **sections: dict[str, object]) -> Path:
    master = {"exit_when_done": False, **sections.pop("master", {})}
    config = cluster.master_config(master=master, **sections)
    cluster.start("master", name, config)
    return cluster.workdir / f"{name}.yaml"


def wait_api(cluster: Cluster) -> None:
    state = cluster.workdir / "state"
    assert wait_until(lambda: (state / "api.json").exists(), 30)


def error_lines(cluster: Cluster, name: str) -> list[str]:
    text = cluster.proc(name).log_path.read_text()
    assert "Traceback" not in text, text[-3000:]
    return [line for line in text.splitlines() if not line.startswith("{")]


def test_a_second_master_on_ports_in_use_says_so_in_one_line(cluster: Cluster) -> None:
    control = f"tcp://127.0.0.1:{free_port()}"
    results = f"tcp://127.0.0.1:{free_port()}"
    binds: dict[str, object] = {"bind": control, "results_bind": results, "exit_when_done": False}
    start_idle_master(cluster, "master", master=binds)
    wait_api(cluster)
    other_state = {**binds, "state_dir": str(cluster.workdir / "state-2")}
    second = cluster.start("master", "second", cluster.master_config(master=other_state))
    assert cluster.wait(second, 30) == 2
    assert error_lines(cluster, "second") == [
        f"nadird: error: cannot listen on {control} (master.bind): Address already in use"
    ]
    assert cluster.proc("master").popen.poll() is None  # the first one runs on


def test_an_api_port_in_use_says_so_in_one_line(cluster: Cluster) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        start_idle_master(cluster, "master", api={"port": port})
        assert cluster.wait(cluster.proc("master"), 30) == 2
    [line] = error_lines(cluster, "master")
    assert line.startswith(f"nadird: error: cannot listen on 127.0.0.1:{port} (api.host/api.port)")


def test_the_client_finds_the_token_where_the_master_does(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "t" * 24
    monkeypatch.setenv(TOKEN_VAR, token)  # inherited by the master
    config = start_idle_master(cluster, "master", api={"port": 0, "token_env": TOKEN_VAR})
    wait_api(cluster)
    assert not (cluster.workdir / "state" / "api.token").exists()
    proc = nadird("status", "-c", str(config))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["complete"] is True  # no seeds: nothing to do

    without = {k: v for k, v in os.environ.items() if k != TOKEN_VAR}
    proc = nadird("status", "-c", str(config), env=without)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"nadird: error: (environment): {TOKEN_VAR}: a token of at least")


def test_status_into_a_closed_pipe_exits_quietly(cluster: Cluster) -> None:
    config = start_idle_master(cluster, "master")
    wait_api(cluster)
    proc = subprocess.Popen(
        [sys.executable, "-m", "nadird", "status", "-c", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head` that has already exited
    stderr = proc.stderr.read().decode()
    assert proc.wait(60) == 141
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
