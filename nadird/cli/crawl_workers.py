"""The worker processes of `nadird crawl`: their config files and their supervisor."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
from pathlib import Path

import yaml

from nadird.common.children import ended_with_parent
from nadird.common.logs import get_logger
from nadird.common.progress import Console
from nadird.config import Config
from nadird.master.service.server import Master

log = get_logger()
MAX_RESTARTS = 5


def worker_config_file(config: Config, master: Master, index: int, state_dir: str) -> Path:
    data = {
        "node": f"{config.node}-w{index}",
        "log_level": config.log_level,
        "log_format": config.log_format,
        # One `page_crawled` line per page at info, like the crawl's own lines.
        "log_pages": "info",
        "worker": {
            **dataclasses.asdict(config.worker),
            "master": master.control_endpoint,
            "results": master.results_endpoint,
            "exit_when_done": True,
        },
        "fetch": dataclasses.asdict(config.fetch),
        "security": local_security(config, master),
    }
    path = Path(state_dir) / f"worker-{index}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def local_security(config: Config, master: Master) -> dict[str, object]:
    """Where the workers find the keys the master made (protocol/local_keys.py),
    or the open mesh the config chose."""
    sec = config.security
    if master.security.local is not None:
        return {"local_keys_dir": str(master.security.local.directory)}
    return {"allow_insecure_loopback": sec.allow_insecure_loopback, "insecure": sec.insecure}


class WorkerPool:
    """Starts worker processes and restarts ones that die before the end.

    Workers run in their own session: a Ctrl-C on the terminal reaches this
    process only, which stops them in order (see `terminate`) instead of each
    of them getting the signal twice.

    Their output goes to this process's stderr: straight to the file when it
    is not a terminal, else line by line through the Console, which keeps the
    progress line apart from the log lines."""

    def __init__(self, files: list[Path], console: Console | None = None) -> None:
        self._files = files
        self._procs: list[asyncio.subprocess.Process | None] = [None] * len(files)
        self._console = console if console is not None and console.isatty() else None
        self._forwarders: list[asyncio.Task[None]] = []
        self.restarts = 0
        self.closing = False
        self.killed = 0  # workers that had to be killed: their leases were not returned

    async def _spawn(self, index: int) -> None:
        piped = self._console is not None
        # A crawl killed outright takes its workers with it: they would
        # otherwise wait for ever for its master (exit_when_done never comes).
        config = str(self._files[index])
        command = [sys.executable, "-m", "nadird", "--role", "worker", "-c", config]
        proc = await asyncio.create_subprocess_exec(
            *ended_with_parent(command),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if piped else sys.stderr.fileno(),
            stderr=asyncio.subprocess.STDOUT if piped else None,
            start_new_session=True,
        )
        self._procs[index] = proc
        if proc.stdout is not None:
            self._forwarders.append(asyncio.create_task(self._forward(proc.stdout)))

    async def _forward(self, out: asyncio.StreamReader) -> None:
        assert self._console is not None
        while line := await out.readline():
            self._console.write(line.decode("utf-8", "replace"))
        self._console.flush()

    async def supervise(self) -> None:
        for i in range(len(self._files)):
            await self._spawn(i)
        while not self.closing:
            await asyncio.sleep(0.2)
            for i, proc in enumerate(self._procs):
                if proc is None or proc.returncode is None or self.closing:
                    continue
                if self.restarts >= MAX_RESTARTS:
                    raise RuntimeError(f"worker processes keep dying (last exit {proc.returncode})")
                self.restarts += 1
                log.warning("worker_restarted", index=i, exit=proc.returncode)
                await self._spawn(i)

    def running(self) -> list[asyncio.subprocess.Process]:
        return [p for p in self._procs if p is not None and p.returncode is None]

    def terminate(self) -> None:
        """SIGTERM every worker: each finishes its requests in flight, hands
        the rest of its bags back to the master and exits."""
        self.closing = True
        for proc in self.running():
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()

    def kill(self) -> None:
        for proc in self.running():
            with contextlib.suppress(ProcessLookupError):
                proc.kill()

    async def close(self, grace: float = 10.0) -> None:
        self.closing = True
        procs = [p for p in self._procs if p is not None]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), grace)
        for proc in procs:
            if proc.returncode is None:
                self.killed += 1
                proc.kill()
                await proc.wait()
        if self._forwarders:  # the last lines of the workers, up to end of file
            await asyncio.gather(*self._forwarders, return_exceptions=True)
