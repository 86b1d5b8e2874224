"""The shipped configs start as the systemd unit starts them.

Each test copies configs/*.yaml into a directory standing for /etc/nadird,
with /var/lib/nadird and the ports rewritten to a temporary directory and
free loopback ports (and, for the remote case, the commented security blocks
uncommented and /etc/nadird/keys rewritten), then runs the unit's ExecStart
line with its WorkingDirectory.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import REPO

from nadird.testing.cluster import wait_until

ROOT = REPO
PORTS = (5550, 5551, 5580, 5590)  # control, results, master API, worker HTTP
pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def unit_command(role: str, etc: Path) -> list[str]:
    """The unit's ExecStart for instance `role`, with /etc/nadird at `etc`."""
    unit = (ROOT / "systemd" / "nadird@.service").read_text()
    line = next(ln for ln in unit.splitlines() if ln.startswith("ExecStart="))
    words = line.removeprefix("ExecStart=").replace("%i", role).split()
    assert words[0] == "/usr/local/bin/nadird"
    args = [w.replace("/etc/nadird/", f"{etc}/") for w in words[1:]]
    return [sys.executable, "-m", "nadird", *args]


def working_directory() -> str:
    unit = (ROOT / "systemd" / "nadird@.service").read_text()
    return next(ln for ln in unit.splitlines() if ln.startswith("WorkingDirectory=")).split("=")[1]


@dataclass
class Installed:
    etc: Path
    state: Path
    ports: dict[int, int]
    logs: Path

    def start(self, role: str) -> subprocess.Popen[bytes]:
        with open(self.logs / f"{role}.log", "ab") as out:
            return subprocess.Popen(
                unit_command(role, self.etc),
                cwd=self.state,  # WorkingDirectory=/var/lib/nadird
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    def url(self, shipped_port: int, path: str) -> str:
        return f"http://127.0.0.1:{self.ports[shipped_port]}{path}"

    def log(self, role: str) -> str:
        return (self.logs / f"{role}.log").read_text(errors="replace")


def install(tmp_path: Path, rewrite: Any = None) -> Installed:
    etc, state, logs = tmp_path / "etc", tmp_path / "state", tmp_path / "logs"
    for directory in (etc, state, logs):
        directory.mkdir()
    ports = {port: free_port() for port in PORTS}
    for role in ("master", "worker"):
        text = (ROOT / "configs" / f"{role}.yaml").read_text()
        if role == "master":
            assert working_directory() in text  # state_dir and store.uri
        text = text.replace(working_directory(), str(state))
        for shipped, port in ports.items():
            text = text.replace(f":{shipped}", f":{port}").replace(
                f"port: {shipped}", f"port: {port}"
            )
        if role == "master":
            assert "\napi:" not in text
            text += f"\napi:\n  port: {ports[5580]}\n"  # the shipped default, moved
        if rewrite is not None:
            text = rewrite(text)
        (etc / f"{role}.yaml").write_text(text)
    return Installed(etc, state, ports, logs)


def get(url: str, token: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=2) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    except OSError:
        return 0, None


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def start_both(installed: Installed, processes: list[subprocess.Popen[bytes]]) -> None:
    master = installed.start("master")
    processes.append(master)
    healthy = wait_until(lambda: get(installed.url(5580, "/healthz"))[0] == 200, 30, 0.2)
    assert healthy, installed.log("master")
    worker = installed.start("worker")
    processes.append(worker)
    token = (installed.state / "api.token").read_text().strip()

    def registered() -> bool:
        status, body = get(installed.url(5580, "/api/nodes"), token)
        return status == 200 and [n["node"] for n in body["nodes"]] == ["worker-1"]

    assert wait_until(registered, 30, 0.2), installed.log("worker")
    status, health = get(installed.url(5590, "/healthz"))
    assert (status, health["connected"], health["node"]) == (200, True, "worker-1")
    for proc in (worker, master):
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


def test_shipped_configs_start_as_the_unit_runs_them(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    installed = install(tmp_path)
    start_both(installed, processes)
    assert (installed.state / "frontier.db").exists()
    assert (installed.state / "nadird.db").exists()  # store.uri under the state dir


def uncomment_security(text: str, keys: Path) -> str:
    text = re.sub(r"^# (security:)$", r"\1", text, flags=re.M)
    text = re.sub(r"^#   (\w+: /etc/nadird/keys/.*)$", r"  \1", text, flags=re.M)
    return text.replace("/etc/nadird/keys", str(keys))


def test_the_commented_remote_case_runs_with_keys_the_installer_makes(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    keys = tmp_path / "keys"
    installed = install(tmp_path, lambda text: uncomment_security(text, keys))
    assert "security:" in (installed.etc / "master.yaml").read_text()
    for name in ("master", "worker"):  # as scripts/install-systemd.sh does
        subprocess.run(
            [sys.executable, "-m", "nadird", "keygen", "--out", str(keys), "--name", name],
            check=True,
            capture_output=True,
        )
    (keys / "workers").mkdir()
    shutil.copy(keys / "worker.key", keys / "workers" / "worker-1.key")
    start_both(installed, processes)
    assert '"curve_enabled"' in installed.log("master")


def test_a_master_open_to_other_hosts_without_keys_names_the_file(tmp_path: Path) -> None:
    installed = install(tmp_path, lambda text: text.replace("tcp://127.0.0.1:", "tcp://0.0.0.0:"))
    proc = subprocess.run(
        unit_command("master", installed.etc), cwd=installed.state, capture_output=True, timeout=60
    )
    assert proc.returncode == 2
    message = proc.stderr.decode()
    assert f"{installed.etc}/master.yaml: master.bind: tcp://0.0.0.0:" in message, message
