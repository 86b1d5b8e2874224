"""Start `nadird` processes for tests without paying for their imports each time.

A master or worker spends about a second of CPU importing its modules before
it does anything; a test suite starts a thousand of them on two cores. The
fork server is one process per test process that has imported them once: it
forks a child for each start, and the child runs `nadird`'s command line
exactly as `python -m nadird ARGS` would (its own log file, environment,
working directory and exit status; the interpreter's usual exit, atexit
handlers and all). The test sees a ForkedProcess, which answers what the
tests ask of a subprocess.Popen: pid, poll, wait, send_signal, kill.

Protocol, one JSON object a line: the client sends {argv, env, cwd, stdout,
stderr} (the files the child writes to);
the server answers {"pid"} at once, and {"exited", "code"} when that child
ends (a negative code: killed by that signal, as Popen says).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

Popen = subprocess.Popen[bytes]

# What a master and a worker import before their first log line.
PRELOAD = (
    "nadird.cli.main",
    "nadird.cli.commands",
    "nadird.master.service.role",
    "nadird.worker.service.agent",
)
SPAWN_ENV = "NADIRD_TEST_SPAWN"  # "1": no fork server, each start a new interpreter
REAP_EVERY = 0.01  # seconds: how late the server may tell that a child ended


# ---------------------------------------------------------------- the server
def serve() -> dict[str, Any]:
    """Fork a child per request; return (in the child) the request to run.
    The parent never returns: it exits when the client closes its stdin."""
    # The raw descriptor, never a file object: one would close it in the
    # child when collected, and the loop would get fd 0 for a socket.
    pending = b""
    while True:
        ready, _, _ = select.select([0], [], [], REAP_EVERY)
        _reap()
        if not ready:
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            os._exit(0)  # the client is gone; its children are its own business
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                return dict(request)
            _say({"pid": pid})


def _reap() -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _say({"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def _say(message: dict[str, Any]) -> None:
    os.write(1, json.dumps(message).encode() + b"\n")


def become(request: dict[str, Any]) -> None:
    """In the child: the process `python -m nadird ARGV` would have been."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(out, fd)
        os.close(out)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])


# ---------------------------------------------------------------- the client
class ForkedProcess:
    """A child of the fork server, as the tests use a subprocess.Popen."""

    def __init__(self, server: ForkServer, pid: int, args: list[str]) -> None:
        self.server = server
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.code_of(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            code = self.server.code_of(self.pid, timeout)
            if code is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            self.returncode = code
        return self.returncode

    def send_signal(self, sig: int) -> None:
        # The server reaps a child up to REAP_EVERY before it says so: one
        # that ended in between is gone, and a signal to it does nothing, as
        # Popen.send_signal does to a process that has ended.
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(15)

    def kill(self) -> None:
        self.send_signal(9)


class ForkServer:
    """One server process for this test process, started on first use."""

    def __init__(self) -> None:
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "nadird.testing.forkserver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.requests: IO[bytes] = self.popen.stdin
        self.lock = threading.Lock()  # one start at a time: answers come in order
        self.changed = threading.Condition()
        self.pids: list[int] = []  # answers to starts, not taken yet
        self.codes: dict[int, int] = {}
        self.ended = False  # the server's output closed: no more answers
        threading.Thread(target=self._read, args=(self.popen.stdout,), daemon=True).start()

    def start(
        self,
        argv: list[str],
        stdout: str,
        stderr: str | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
    ) -> ForkedProcess:
        """Fork `nadird ARGV`; its stdout appended to the file `stdout`, its
        stderr to `stderr` (the same file when None)."""
        request = {
            "argv": argv,
            "env": dict(os.environ if env is None else env),
            "cwd": cwd or os.getcwd(),
            "stdout": stdout,
            "stderr": stderr or stdout,
        }
        for path in {stdout, stderr or stdout}:
            open(path, "ab").close()  # there when start returns, as with Popen
        with self.lock:
            self.requests.write(json.dumps(request).encode() + b"\n")
            self.requests.flush()
            with self.changed:
                if not self.changed.wait_for(lambda: self.pids or self.ended, 60):
                    raise RuntimeError("the fork server did not answer")
                if not self.pids:
                    raise RuntimeError(f"the fork server ended ({self.popen.returncode})")
                pid = self.pids.pop(0)
        return ForkedProcess(self, pid, [sys.executable, "-m", "nadird", *argv])

    def code_of(self, pid: int, timeout: float | None) -> int | None:
        """The child's exit code, None if it runs on after `timeout`."""
        with self.changed:
            self.changed.wait_for(lambda: pid in self.codes or self.ended, timeout)
            if pid not in self.codes and self.ended:
                raise RuntimeError(f"the fork server ended: child {pid}'s end is unknown")
            return self.codes.get(pid)

    def _read(self, answers: IO[bytes]) -> None:
        for line in answers:
            message = json.loads(line)
            with self.changed:
                if "pid" in message:
                    self.pids.append(message["pid"])
                else:
                    self.codes[message["exited"]] = message["code"]
                self.changed.notify_all()
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def close(self) -> None:
        """Closing its stdin ends the server; its children run on."""
        self.requests.close()
        self.popen.wait(10)


_server: ForkServer | None = None


def fork_server() -> ForkServer:
    """This test process's server (started now if need be)."""
    global _server
    if _server is None or _server.popen.poll() is not None:
        _server = ForkServer()
        atexit.register(_server.close)
    return _server


def start(argv: list[str], log_path: str, env: dict[str, str] | None) -> ForkedProcess | Popen:
    """`python -m nadird ARGV`, its output to `log_path`: forked by the
    server, or from a fresh interpreter when NADIRD_TEST_SPAWN=1."""
    if os.environ.get(SPAWN_ENV) != "1":
        return fork_server().start(argv, log_path, env=env)
    with open(log_path, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "nadird", *argv],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )


def run_as_nadird(request: dict[str, Any]) -> int:
    """In the child: `python -m nadird ARGV` from here on."""
    become(request)
    import nadird.cli.main

    sys.argv = [str(Path(nadird.cli.main.__file__).parent.parent / "__main__.py")]
    sys.argv += request["argv"]
    return nadird.cli.main.main()


def run(
    command: list[str],
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """subprocess.run(command, capture_output=True, text=True, no stdin) for
    a command `[sys.executable, "-m", "nadird", *ARGV]`, forked."""
    if command[:3] != [sys.executable, "-m", "nadird"]:
        raise ValueError(f"not a python -m nadird command: {command[:3]}")
    if os.environ.get(SPAWN_ENV) == "1":
        return subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="nadird-run-") as folder:
        out, err = Path(folder, "stdout"), Path(folder, "stderr")
        directory = None if cwd is None else os.fspath(cwd)
        child = fork_server().start(command[3:], str(out), str(err), env=env, cwd=directory)
        try:
            code = child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait(10)
            raise
        return subprocess.CompletedProcess(
            command, code, out.read_text(errors="replace"), err.read_text(errors="replace")
        )


if __name__ == "__main__":
    for name in PRELOAD:
        importlib.import_module(name)
    # The child leaves serve() with its request, and ends as an interpreter
    # does: SystemExit unwinds, then threads, atexit, finalizers.
    sys.exit(run_as_nadird(serve()))
