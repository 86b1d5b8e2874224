"""`nadird crawl`: a master in this process and N worker processes, to completion.

The same master and worker code as the daemons, wired over loopback TCP on
ports the kernel picks. Workers that die are restarted (a few times) and lose
nothing: their leases expire or are reclaimed when they say hello again.

SIGINT, SIGTERM or SIGHUP stop the crawl: the workers hand their bags back,
the master stops, the summary says `complete: false` and the exit status is
128 + the signal's number. A later crawl with the same --state-dir resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nadird.cli.argtypes import out_format
from nadird.cli.crawl_workers import WorkerPool, worker_config_file
from nadird.cli.daemon import CrawlSignals, signal_exit_status
from nadird.common.http_status import status_class
from nadird.common.logs import get_logger
from nadird.common.progress import Console, report
from nadird.config import Config, LogLevel, Seed, WorkerConfig
from nadird.job.spec import JAVASCRIPT, Job
from nadird.master.service.server import Master
from nadird.master.view.status import invalid_by_job
from nadird.store.backend import Store
from nadird.store.base import PageRecord
from nadird.store.export import export_to
from nadird.store.items import KeyedItem
from nadird.store.open import open_store
from nadird.store.uri import describe_store_uri
from nadird.worker.render.step import new_renderer

log = get_logger()


@dataclass
class CrawlOptions:
    seeds: list[Seed]
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
    log_level: LogLevel | None = None  # this process's and the workers'
    revisit: float | None = None  # --revisit: seconds between fetches of each page
    run_for: float | None = None  # --for: stop after this many seconds


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
        revisit={"every": opts.revisit} if opts.revisit is not None else job.revisit,
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
        log_level=opts.log_level or base.log_level,
        worker=_with_browser(base.worker, jobs),
        master=master,
        api=dataclasses.replace(base.api, port=0),
        fetch=fetch,
        store=dataclasses.replace(base.store, uri=opts.store),
        jobs=jobs,
        seeds=[*base.seeds, *opts.seeds],
    )


def _with_browser(worker: WorkerConfig, jobs: dict[str, Job]) -> WorkerConfig:
    """Workers get a browser (the javascript capability) when a job may render:
    such a job requires it, and its bags would otherwise wait for no one."""
    if JAVASCRIPT in worker.capabilities or all(j.render is False for j in jobs.values()):
        return worker
    return dataclasses.replace(worker, capabilities=[*worker.capabilities, JAVASCRIPT])


class SinceStart:
    """The store as the summary and `--out` see it: the records this crawl
    fetched (a store given with --store may hold older ones)."""

    def __init__(self, store: Store, since: float) -> None:
        self._store = store
        self._since = since

    async def open(self) -> None:
        await self._store.open()

    async def write(self, records: Sequence[PageRecord]) -> None:
        await self._store.write(records)

    async def upsert_items(self, records: Sequence[PageRecord]) -> int:
        return await self._store.upsert_items(records)

    def iter_items(self, job: str | None = None) -> AsyncIterator[KeyedItem]:
        # Keyed items merge fetches of every crawl: they are not filtered by time.
        return self._store.iter_items(job)

    async def count(self, job: str | None = None) -> int:
        return sum([1 async for _ in self.iter_records(job)])

    async def iter_records(self, job: str | None = None) -> AsyncIterator[PageRecord]:
        async for record in self._store.iter_records(job):
            if record.fetched_at >= self._since:
                yield record

    async def close(self) -> None:
        await self._store.close()

    @property
    def pages_added(self) -> int:
        return self._store.pages_added

    @property
    def spool_records(self) -> int:
        return self._store.spool_records

    @property
    def backpressure(self) -> bool:
        return self._store.backpressure


async def summarize(store: Store, started: float, out: str | None) -> dict[str, Any]:
    """Count (and export, in the format `out`'s extension names) what this crawl stored.

    The definitions of the master's status and metrics: `pages` have no
    error (a 404 is a page), `errors` have one; fetched pages (those with a
    status) are counted again by status class in `http_status`."""
    crawled = SinceStart(store, started)
    pages = errors = 0
    classes: dict[str, int] = {}
    async for record in crawled.iter_records():
        if record.error:
            errors += 1
        else:
            pages += 1
        if record.status:
            klass = status_class(record.status)
            classes[klass] = classes.get(klass, 0) + 1
    if out is not None:
        await export_to(crawled, out, out_format(out))
    return {"pages": pages, "errors": errors, "http_status": dict(sorted(classes.items()))}


@dataclass
class Finish:
    """How a crawl ended: complete, stopped by a signal, or failed."""

    complete: bool
    signal: signal.Signals | None
    failed: BaseException | None
    timed_out: bool = False  # --for ran out: a planned end

    def exit_status(self) -> int:
        if self.failed is not None:
            return 1
        if self.signal is not None:
            return signal_exit_status(self.signal)
        return 0 if self.complete or self.timed_out else 1


async def _wait_gone(master: Master, pool: WorkerPool, timeout: float) -> None:
    """Until the workers have said goodbye (or exited): by then the master
    holds the bags they handed back. Their processes may still be exiting."""
    deadline = time.monotonic() + timeout
    while pool.running() and time.monotonic() < deadline:
        if not master.core.nodes.all() and not len(master.core.leases):
            return
        await asyncio.sleep(0.05)


async def _run_to_end(
    config: Config,
    master: Master,
    pool: WorkerPool,
    console: Console | None,
    run_for: float | None = None,
) -> Finish:
    signals = CrawlSignals(force=pool.kill)
    signals.install()
    supervisor = asyncio.create_task(pool.supervise())
    progress = asyncio.create_task(report(master.full_status, console or sys.stderr))
    waits = {
        asyncio.ensure_future(master.done.wait()),
        asyncio.ensure_future(master.failed.wait()),  # state could not be written
        asyncio.ensure_future(signals.stop.wait()),
        supervisor,
    }
    # --for: a continuous crawl is never complete; it ends when its time is up.
    timer = asyncio.ensure_future(asyncio.sleep(run_for if run_for is not None else math.inf))
    waits.add(timer)
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    timed_out = timer.done() and not master.done.is_set()
    timer.cancel()
    failed = supervisor.exception() if supervisor.done() else None
    progress.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await progress  # its last line ends before anything else is written
    if not master.done.is_set():
        # Workers first, while the master still runs: their bags come back
        # to its frontier (and their results to the store) before it stops.
        pool.terminate()
        await _wait_gone(master, pool, config.shutdown_timeout)
    pool.closing = True
    await master.stop()
    await pool.close(config.shutdown_timeout)
    supervisor.cancel()
    with contextlib.suppress(asyncio.CancelledError, RuntimeError):
        await supervisor
    return Finish(master.done.is_set(), signals.received, failed, timed_out)


async def run_crawl(opts: CrawlOptions, base: Config, console: Console | None = None) -> int:
    started_wall = time.time()
    started = time.monotonic()
    temp = None if opts.state_dir else tempfile.TemporaryDirectory(prefix="nadird-crawl-")
    state_dir = opts.state_dir or (temp.name if temp else ".")
    Path(state_dir).mkdir(parents=True, exist_ok=True)
    config = crawl_config(opts, base, state_dir)
    # No browser here: one ConfigError now rather than workers dying in a loop.
    new_renderer(config)
    store = open_store(config.store.uri, config.store)
    await store.open()
    master = Master(config, store)
    try:
        await master.start()
    except BaseException:
        await store.close()
        raise
    files = [worker_config_file(config, master, i + 1, state_dir) for i in range(opts.workers)]
    pool = WorkerPool(files, console)
    finish = await _run_to_end(config, master, pool, console, opts.run_for)
    counts = await summarize(store, started_wall, opts.out)
    stored_total = await store.count()
    await store.close()
    if temp is not None:
        temp.cleanup()
    counts["stored_total"] = stored_total
    _print_summary(finish, master, counts, time.monotonic() - started, config, opts.out)
    if finish.failed is not None:
        log.error("crawl_failed", error=str(finish.failed))
    return finish.exit_status()


def _print_summary(
    finish: Finish,
    master: Master,
    counts: dict[str, Any],
    seconds: float,
    config: Config,
    out: str | None,
) -> None:
    summary = {
        "event": "crawl_summary",
        "complete": finish.complete,
        **counts,
        "dead_letters": master.core.stats["dead_letters"],
        "retries": master.core.stats["retries"],
        "invalid_items": invalid_by_job(master.core.invalid),
        "fallbacks": invalid_by_job(master.core.fallbacks.handed),
        "seconds": round(seconds, 3),
        "pages_per_s": round(counts["pages"] / seconds, 1) if seconds > 0 else 0.0,
        "store": describe_store_uri(config.store.uri),
        "out": out,
        "signal": finish.signal.name if finish.signal is not None else None,
    }
    if finish.timed_out or master.core.revisits.scanning:
        # A crawl cut by --for says so, revisiting or not: "complete": false
        # with no signal would not tell why it ended.
        summary["timed_out"] = finish.timed_out
    if master.core.revisits.scanning:
        revisits = master.core.revisits
        summary["revisits"] = {
            "checks": revisits.checks,
            "changes": revisits.changes,
            "not_modified": revisits.not_modified,
        }
    print(json.dumps(summary), flush=True)
