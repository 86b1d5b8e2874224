"""`nadird crawl`: a master in this process and N worker processes, to completion.

The same master and worker code as the daemons, wired over loopback TCP on
ports the kernel picks. Workers that die are restarted (a few times) and lose
nothing: their leases expire or are reclaimed when they say hello again.

SIGINT, SIGTERM or SIGHUP stop the crawl: the workers hand their bags back,
the master stops, the summary says `complete: false` and the exit status is
128 + the signal's number. A later crawl with the same --state-dir resumes.
A second signal exits at once, after a summary of the counts so far and
without leaving the temporary state directory behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nadird.cli.crawl_summary import (
    Finish,
    Tally,
    explain,
    forced_summary,
    print_summary,
    summarize,
    summary_line,
)
from nadird.cli.crawl_workers import WorkerPool, worker_config_file
from nadird.cli.daemon import CrawlSignals
from nadird.cli.state_dir import prepare_state_dir
from nadird.common.logs import get_logger
from nadird.common.progress import Console, report
from nadird.common.typecheck import Mismatch
from nadird.config import Config, LogLevel, Seed, WarcConfig, WorkerConfig
from nadird.job.spec import JAVASCRIPT, Job
from nadird.master.service.server import Master
from nadird.master.view.status import invalid_by_job
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
    # Where state_dir comes from, for its error: (file, key) or the command line.
    state_dir_source: tuple[str, str] = ("(command line)", "--state-dir")
    render: bool = False  # --render: the default job renders every HTML page
    log_level: LogLevel | None = None  # this process's and the workers'
    revisit: float | None = None  # --revisit: seconds between fetches of each page
    feeds: bool = False  # --feeds: the default job follows feeds and sitemaps (job/feeds.py)
    article: bool = False  # --article: the default job's article fields (job/article.py)
    run_for: float | None = None  # --for: stop after this many seconds
    warc: str | None = None  # --warc: write the web archive into this directory


def override_jobs(base: Config, opts: CrawlOptions) -> Config:
    """The `default` job as the command line changes it. Given to load_config
    so that the config's checks see it (an alert rule on changes needs the
    job to revisit, which --revisit does); applying it twice changes nothing.
    Mismatch when the job's own rules refuse an option (`parser: lexbor`
    beside --article or --feeds)."""
    try:
        job = _override_default_job(base.jobs.get("default", Job()), opts)
    except ValueError as exc:
        raise Mismatch("jobs.default", f"{exc} (with the command line's options)") from exc
    return dataclasses.replace(base, jobs={**base.jobs, "default": job})


def _override_default_job(job: Job, opts: CrawlOptions) -> Job:
    links = job.links
    if opts.allow_domains:
        links = dataclasses.replace(
            links,
            scope="allowed-domains",
            allowed_domains=list(dict.fromkeys([*links.allowed_domains, *opts.allow_domains])),
        )
    return dataclasses.replace(
        job,
        links=links,
        max_depth=opts.max_depth if opts.max_depth is not None else job.max_depth,
        max_pages=opts.max_pages if opts.max_pages is not None else job.max_pages,
        delay=opts.delay if opts.delay is not None else job.delay,
        domain_concurrency=opts.domain_concurrency or job.domain_concurrency,
        max_retries=opts.retries if opts.retries is not None else job.max_retries,
        render=True if opts.render else job.render,
        revisit={"every": opts.revisit} if opts.revisit is not None else job.revisit,
        feeds=job.feeds or opts.feeds,  # a `feeds:` mapping of the config stays
        article=job.article or opts.article,  # so does an `article:` mapping
    )


def crawl_config(opts: CrawlOptions, base: Config, state_dir: str) -> Config:
    base = override_jobs(base, opts)
    jobs = base.jobs
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
        warc=_warc(base.warc, opts.warc),
    )


def _warc(base: WarcConfig | None, directory: str | None) -> WarcConfig | None:
    """--warc DIR: the config's warc: section (or its defaults) writing into DIR."""
    if directory is None:
        return base
    return WarcConfig(dir=directory) if base is None else dataclasses.replace(base, dir=directory)


def _with_browser(worker: WorkerConfig, jobs: dict[str, Job]) -> WorkerConfig:
    """Workers get a browser (the javascript capability) when a job may render:
    such a job requires it, and its bags would otherwise wait for no one."""
    if JAVASCRIPT in worker.capabilities or all(j.render is False for j in jobs.values()):
        return worker
    return dataclasses.replace(worker, capabilities=[*worker.capabilities, JAVASCRIPT])


async def _wait_gone(master: Master, pool: WorkerPool, timeout: float) -> None:
    """Until the workers have said goodbye (or exited): by then the master
    holds the bags they handed back. Their processes may still be exiting."""
    deadline = time.monotonic() + timeout
    while pool.running() and time.monotonic() < deadline:
        if not master.core.nodes.all() and not len(master.core.leases):
            return
        await asyncio.sleep(0.05)


async def _wait_joined(master: Master, pool: WorkerPool, bound: float = 1.0) -> None:
    """A small crawl may be complete before a worker still starting has
    joined: it would then never hear the master's Shutdown and be killed
    only after the grace. Wait for it a while (a second: how long every
    crawl once waited for the housekeeping tick that saw it complete)."""
    deadline = time.monotonic() + bound
    while len(master.core.nodes) < len(pool.running()) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


async def _run_to_end(
    config: Config,
    master: Master,
    pool: WorkerPool,
    console: Console | None,
    run_for: float | None = None,
    forced: Callable[[signal.Signals | None], None] | None = None,
) -> Finish:
    signals = CrawlSignals()

    def force() -> None:
        """A second signal: the process exits at once, its workers killed;
        `forced` says what is known and removes what was temporary."""
        pool.kill()
        if forced is not None:
            forced(signals.received)

    signals.force = force
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
    else:
        await _wait_joined(master, pool)
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
    prepare_state_dir(state_dir, *opts.state_dir_source)
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

    def forced(first: signal.Signals | None) -> None:
        stats = master.core.stats
        print_summary(forced_summary(stats, time.monotonic() - started, config.store.uri, first))
        if temp is not None:
            with contextlib.suppress(OSError):
                temp.cleanup()

    finish = await _run_to_end(config, master, pool, console, opts.run_for, forced)
    tally = await summarize(store, started_wall, opts.out)
    stored_total = await store.count()
    await store.close()
    if temp is not None:
        temp.cleanup()
    dead_letters = master.core.stats["dead_letters"]
    finish.judge(tally, dead_letters)
    seconds = time.monotonic() - started
    print_summary(_summary(finish, master, tally, stored_total, seconds, config, opts.out))
    explain(tally, dead_letters, config.fetch.allow_private)
    if finish.failed is not None:
        log.error("crawl_failed", error=str(finish.failed))
    return finish.exit_status()


def _article_facts(master: Master) -> dict[str, Any]:
    """What article jobs counted (generic steps taken, extractions given up,
    near-duplicates); nothing for a crawl without them."""
    articles, core = master.core.tallies.articles, master.core
    counts = {
        "fallback_extractions": invalid_by_job(articles.fallbacks),
        "article_given_up": invalid_by_job(articles.given_up),
        "near_duplicates": invalid_by_job(core.near_dups.counted),
    }
    return {key: value for key, value in counts.items() if value}


def _summary(
    finish: Finish,
    master: Master,
    tally: Tally,
    stored_total: int,
    seconds: float,
    config: Config,
    out: str | None,
) -> dict[str, Any]:
    facts = {
        "stored_total": stored_total,
        "dead_letters": master.core.stats["dead_letters"],
        "retries": master.core.stats["retries"],
        "invalid_items": invalid_by_job(master.core.invalid),
        "fallbacks": invalid_by_job(master.core.fallbacks.handed),
        **_article_facts(master),
    }
    extra = {
        "seconds": round(seconds, 3),
        "pages_per_s": round(tally.pages / seconds, 1) if seconds > 0 else 0.0,
        "store": describe_store_uri(config.store.uri),
        "out": out,
    }
    summary = summary_line(finish, tally, facts, extra)
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
    feeds = master.core.discovery.status()
    if feeds:  # jobs with feeds: articles by source, discovery latency
        summary["feeds"] = feeds
    return summary
