"""`nadird crawl`: a master in this process and N worker processes, to completion.

The same master and worker code as the daemons, wired over loopback TCP on
ports the kernel picks. Workers that die are restarted (a few times) and lose
nothing: their leases expire or are reclaimed when they say hello again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nadird.config import Config, Seed, WorkerConfig
from nadird.daemon import stop_on_signals
from nadird.jobs import JAVASCRIPT, Job
from nadird.logs import get_logger
from nadird.master.records import status_class
from nadird.master.server import Master
from nadird.progress import Console, report
from nadird.store.base import Store
from nadird.store.open import describe_store_uri, open_store
from nadird.worker.render_step import new_renderer

log = get_logger()
MAX_RESTARTS = 5


@dataclass
class CrawlOptions:
    seeds: list[str]
    workers: int = 2
    max_pages: int | None = None
    max_depth: int | None = None
    allow_domains: list[str] = field(default_factory=list)
    out: str | None = None
    delay: float | None = None
    domain_concurrency: int | None = None
    retries: int | None = None
    store: str = "sqlite:///nadird-crawl.db"
    resolve: dict[str, str] = field(default_factory=dict)
    allow_private: bool = False
    state_dir: str | None = None
    render: bool = False  # --render: the default job renders every HTML page


def crawl_config(opts: CrawlOptions, base: Config, state_dir: str) -> Config:
    job = base.jobs.get("default", Job())
    links = job.links
    if opts.allow_domains:
        links = dataclasses.replace(
            links,
            scope="allowed-domains",
            allowed_domains=[*links.allowed_domains, *opts.allow_domains],
        )
    job = dataclasses.replace(
        job,
        links=links,
        max_depth=opts.max_depth if opts.max_depth is not None else job.max_depth,
        max_pages=opts.max_pages if opts.max_pages is not None else job.max_pages,
        delay=opts.delay if opts.delay is not None else job.delay,
        domain_concurrency=opts.domain_concurrency or job.domain_concurrency,
        max_retries=opts.retries if opts.retries is not None else job.max_retries,
        render=True if opts.render else job.render,
    )
    jobs = {**base.jobs, "default": job}
    fetch = dataclasses.replace(
        base.fetch,
        resolve={**base.fetch.resolve, **opts.resolve},
        allow_private=opts.allow_private or base.fetch.allow_private,
    )
    master = dataclasses.replace(
        base.master,
        bind="tcp://127.0.0.1:*",
        results_bind="tcp://127.0.0.1:*",
        state_dir=state_dir,
        exit_when_done=True,
    )
    return dataclasses.replace(
        base,
        worker=_with_browser(base.worker, jobs),
        master=master,
        api=dataclasses.replace(base.api, port=0),
        fetch=fetch,
        store=dataclasses.replace(base.store, uri=opts.store),
        jobs=jobs,
        seeds=[*base.seeds, *(Seed(url=u) for u in opts.seeds)],
    )


def _with_browser(worker: WorkerConfig, jobs: dict[str, Job]) -> WorkerConfig:
    """Workers get a browser (the javascript capability) when a job may render:
    such a job requires it, and its bags would otherwise wait for no one."""
    if JAVASCRIPT in worker.capabilities or all(j.render is False for j in jobs.values()):
        return worker
    return dataclasses.replace(worker, capabilities=[*worker.capabilities, JAVASCRIPT])


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
    }
    path = Path(state_dir) / f"worker-{index}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


class WorkerPool:
    """Starts worker processes and restarts ones that die before the end.

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

    async def _spawn(self, index: int) -> None:
        piped = self._console is not None
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "nadird",
            "--role",
            "worker",
            "-c",
            str(self._files[index]),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE if piped else sys.stderr.fileno(),
            stderr=asyncio.subprocess.STDOUT if piped else None,
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

    async def close(self, grace: float = 10.0) -> None:
        self.closing = True
        procs = [p for p in self._procs if p is not None]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), grace)
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        if self._forwarders:  # the last lines of the workers, up to end of file
            await asyncio.gather(*self._forwarders, return_exceptions=True)


async def summarize(store: Store, started: float, out: str | None) -> dict[str, Any]:
    """Count (and export) what this crawl stored: records fetched since it started.

    The definitions of the master's status and metrics: `pages` have no
    error (a 404 is a page), `errors` have one; fetched pages (those with a
    status) are counted again by status class in `http_status`."""
    pages = errors = 0
    classes: dict[str, int] = {}
    sink = open(out, "w", encoding="utf-8") if out else None  # noqa: SIM115
    try:
        async for record in store.iter_records():
            if record.fetched_at < started:
                continue
            if record.error:
                errors += 1
            else:
                pages += 1
            if record.status:
                klass = status_class(record.status)
                classes[klass] = classes.get(klass, 0) + 1
            if sink is not None:
                sink.write(json.dumps(record.export_dict(), ensure_ascii=False) + "\n")
    finally:
        if sink is not None:
            sink.close()
    return {"pages": pages, "errors": errors, "http_status": dict(sorted(classes.items()))}


async def run_crawl(opts: CrawlOptions, base: Config, console: Console | None = None) -> int:
    started_wall = time.time()
    started = time.monotonic()
    temp = None if opts.state_dir else tempfile.TemporaryDirectory(prefix="nadird-crawl-")
    state_dir = opts.state_dir or (temp.name if temp else ".")
    config = crawl_config(opts, base, state_dir)
    # No browser here: one ConfigError now rather than workers dying in a loop.
    new_renderer(config)
    store = open_store(config.store.uri, config.store)
    await store.open()
    master = Master(config, store)
    stop = asyncio.Event()
    stop_on_signals(stop)
    await master.start()
    files = [worker_config_file(config, master, i + 1, state_dir) for i in range(opts.workers)]
    pool = WorkerPool(files, console)
    supervisor = asyncio.create_task(pool.supervise())
    progress = asyncio.create_task(report(master.full_status, console or sys.stderr))
    waits = {
        asyncio.ensure_future(master.done.wait()),
        asyncio.ensure_future(master.failed.wait()),
        asyncio.ensure_future(stop.wait()),
        supervisor,
    }
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    failed = supervisor.done() and supervisor.exception() is not None
    progress.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await progress  # its last line ends before anything else is written
    pool.closing = True
    await master.stop()
    await pool.close()
    supervisor.cancel()
    with contextlib.suppress(asyncio.CancelledError, RuntimeError):
        await supervisor
    counts = await summarize(store, started_wall, opts.out)
    stored_total = await store.count()
    await store.close()
    if temp is not None:
        temp.cleanup()
    seconds = time.monotonic() - started
    summary = {
        "event": "crawl_summary",
        "complete": master.done.is_set(),
        **counts,
        "stored_total": stored_total,
        "dead_letters": master.core.stats["dead_letters"],
        "retries": master.core.stats["retries"],
        "seconds": round(seconds, 3),
        "pages_per_s": round(counts["pages"] / seconds, 1) if seconds > 0 else 0.0,
        "store": describe_store_uri(config.store.uri),
        "out": opts.out,
    }
    print(json.dumps(summary), flush=True)
    if failed:
        log.error("crawl_failed", error=str(supervisor.exception()))
        return 1
    return 0 if master.done.is_set() else 1
