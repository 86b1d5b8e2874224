"""A MongoDB server for tests and benchmarks: SecantusDB on a loopback port.

SecantusDB speaks MongoDB's wire protocol over WiredTiger. It is GPL-2.0 and
a test-only dependency, so it is never imported here: it runs as a separate
process (`python -m secantus`), the same way a real mongod would. Set
NADIRD_TEST_MONGODB_URI to use a real MongoDB instead (tests that need to
stop the server then skip: they cannot stop someone else's).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

EXTERNAL_URI_ENV = "NADIRD_TEST_MONGODB_URI"


def external_uri() -> str | None:
    return os.environ.get(EXTERNAL_URI_ENV) or None


def secantus_available() -> bool:
    return importlib.util.find_spec("secantus") is not None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def with_database(uri: str, database: str) -> str:
    """`uri` with its database path replaced, options kept."""
    scheme, _sep, rest = uri.partition("://")
    authority, _slash, tail = rest.partition("/")
    _path, q, query = tail.partition("?")
    return f"{scheme}://{authority}/{database}{q}{query}"


def with_options(uri: str, **options: object) -> str:
    joiner = "&" if "?" in uri else "?"
    return uri + joiner + "&".join(f"{k}={v}" for k, v in options.items())


class MongoServer:
    """One SecantusDB process; stop() and start() again keep its data directory."""

    def __init__(self, datadir: Path, port: int | None = None, *args: str) -> None:
        self.datadir = datadir
        self.port = port or free_port()
        self.args = list(args)  # e.g. "--standalone": no replica-set advertisement
        self.host = "127.0.0.1"
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def uri(self, database: str) -> str:
        return f"mongodb://{self.host}:{self.port}/{database}"

    def start(self, timeout: float = 30.0) -> None:
        self.datadir.mkdir(parents=True, exist_ok=True)
        log = open(self.datadir.parent / f"secantus-{self.port}.log", "ab")  # noqa: SIM115
        with log:
            self._proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "secantus",
                    "--host",
                    self.host,
                    "--port",
                    str(self.port),
                    "--storage-path",
                    str(self.datadir),
                    "--log-level",
                    "WARNING",
                    *self.args,
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._wait_listening(timeout)

    def _wait_listening(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is None or self._proc.poll() is not None:
                raise RuntimeError(f"secantus exited at start (see {self.datadir.parent})")
            try:
                socket.create_connection((self.host, self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"secantus did not listen on {self.port} within {timeout} s")

    def stop(self, sig: int = signal.SIGKILL) -> None:
        """Stop the server (kill -9 by default: an outage, not a maintenance window)."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)

    def __enter__(self) -> MongoServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
