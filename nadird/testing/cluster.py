"""Run a master and worker processes on loopback for tests and benchmarks.

Sockets are ipc:// files in a short temporary directory (no port races); each
worker gets its own loopback source address (127.0.0.2, 127.0.0.3, ...) so the
synthetic web's access log shows which worker made each request.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nadird.store.base import PageRecord
from nadird.store.sqlite.store import SqliteStore
from nadird.testing.forkserver import ForkedProcess, Popen
from nadird.testing.forkserver import start as start_nadird


@dataclass
class Proc:
    name: str
    popen: ForkedProcess | Popen  # forked by the fork server, or a new interpreter
    log_path: Path

    def logs(self) -> list[dict[str, Any]]:
        events = []
        for line in self.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except ValueError:
                    continue
        return events

    def kill(self, sig: int = signal.SIGKILL) -> None:
        self.popen.send_signal(sig)  # nothing once the process has ended


@dataclass
class Cluster:
    """One crawl's processes and files. Use as a context manager."""

    workdir: Path
    sockdir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="nd", dir="/tmp"))
    procs: list[Proc] = field(default_factory=list)

    @property
    def control(self) -> str:
        return f"ipc://{self.sockdir}/control"

    @property
    def results(self) -> str:
        return f"ipc://{self.sockdir}/results"

    @property
    def local_keys(self) -> Path:
        """Where the master makes the keys of this host's mesh (local_keys.py)."""
        return self.workdir / "state" / "keys"

    @property
    def store_path(self) -> Path:
        return self.workdir / "store.db"

    def master_config(self, **sections: Any) -> dict[str, Any]:
        config: dict[str, Any] = {
            "node": "master",
            "log_level": "info",
            "master": {
                "bind": self.control,
                "results_bind": self.results,
                "state_dir": str(self.workdir / "state"),
                "bag_size": 20,
                "lease_ttl": 1.5,
                "heartbeat_interval": 0.25,
                "exit_when_done": True,
            },
            "politeness": {"delay": 0.0},
            "bloom": {"expected_urls": 200_000, "fp_rate": 0.0001},
            "store": {"uri": f"sqlite:///{self.store_path}", "flush_interval": 0.1},
            "api": {"port": 0},
        }
        for key, value in sections.items():
            if isinstance(value, dict) and isinstance(config.get(key), dict):
                config[key] = {**config[key], **value}
            else:
                config[key] = value
        return config

    def worker_config(self, index: int, **fetch: Any) -> dict[str, Any]:
        return {
            "node": f"w{index}",
            "log_level": "info",
            "worker": {
                "master": self.control,
                "results": self.results,
                "bags": 8,
                "exit_when_done": True,
            },
            "fetch": {
                "resolve": {"*.test": "127.0.0.1"},
                "allow_private": True,
                "source_address": worker_address(index),
                "total_timeout": 10.0,
                **fetch,
            },
            "security": {"local_keys_dir": str(self.local_keys)},
        }

    def start(
        self, role: str, name: str, config: dict[str, Any], env: dict[str, str] | None = None
    ) -> Proc:
        path = self.workdir / f"{name}.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        return self.start_again(name, path, role=role, env=env)

    def start_again(
        self,
        name: str,
        config_path: Path,
        role: str = "master",
        extra: list[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> Proc:
        """Start a process from an existing config file (a restart after a
        crash); `env` is added to the environment it inherits."""
        log_path = self.workdir / f"{name}.log"
        argv = ["--role", role, "-c", str(config_path), *(extra or [])]
        environ = None if env is None else {**os.environ, **env}
        popen = start_nadird(argv, str(log_path), environ)
        proc = Proc(name, popen, log_path)
        self.procs.append(proc)
        return proc

    def member(self, *socks: Any) -> None:
        """Raw ZeroMQ sockets of a test that speaks as one of this host's
        workers: CURVE clients with the keys the master made (waits for them)."""
        import zmq.auth

        secret_file = self.local_keys / "worker.key_secret"
        assert wait_until(secret_file.exists, 30), f"no local keys at {self.local_keys}"
        public, secret = zmq.auth.load_certificate(str(secret_file))
        server, _ = zmq.auth.load_certificate(str(self.local_keys / "master.key"))
        for sock in socks:
            sock.curve_publickey = public
            sock.curve_secretkey = secret
            sock.curve_serverkey = server

    def proc(self, name: str) -> Proc:
        """The newest process started under this name."""
        return next(p for p in reversed(self.procs) if p.name == name)

    def wait(self, proc: Proc, timeout: float) -> int:
        try:
            return proc.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            tail = proc.log_path.read_text(errors="replace")[-3000:]
            raise AssertionError(f"{proc.name} still running after {timeout}s:\n{tail}") from None

    def records(self) -> list[PageRecord]:
        return asyncio.run(read_records(str(self.store_path)))

    def __enter__(self) -> Cluster:
        self.workdir.mkdir(parents=True, exist_ok=True)
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            proc.kill()
            proc.popen.wait(10)
        for leftover in Path(self.sockdir).iterdir():
            leftover.unlink()
        os.rmdir(self.sockdir)


def worker_address(index: int) -> str:
    return f"127.0.0.{index + 1}"


async def read_records(path: str) -> list[PageRecord]:
    store = SqliteStore(path)
    await store.open()
    try:
        return [record async for record in store.iter_records()]
    finally:
        await store.close()


def wait_until(predicate: Any, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False
