"""One checked `nadird crawl` of scripts/bench_round_costs.py, its CPU told
apart per process: the master (the `nadird crawl` process) and its workers
(its children).

The whole tree's CPU is exact (os.wait4 on the top process). The workers'
is what the master's own /proc counters say its waited-for children used,
read every SAMPLE_EVERY seconds until it exits (the workers have exited
and been waited for before the master's last lines), or the sum of the
workers' own last samples when that is more; the master's is the rest.

A crawl that never completes by itself (a `feeds:` job keeps its hubs on a
schedule) is stopped with SIGINT once the store holds `stop_at` pages, as
`nadird crawl` is stopped by hand: it stores what it has and exits 130.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

SAMPLE_EVERY = 0.05  # seconds
RUN_TIMEOUT = 1200.0
STOPPED = 130  # `nadird crawl`'s exit status after SIGINT


@dataclass
class CrawlCpu:
    seconds: float
    total: float  # CPU seconds, master and workers
    master: float
    workers: float


class _Sampler:
    """The last CPU counters seen of the master and of each worker."""

    def __init__(self, pid: int) -> None:
        self.top = psutil.Process(pid)
        self.waited = 0.0  # the master's waited-for children, as it last said
        self.workers: dict[int, float] = {}

    def sample(self) -> None:
        with contextlib.suppress(psutil.Error):
            times = self.top.cpu_times()
            self.waited = max(self.waited, times.children_user + times.children_system)
            for child in self.top.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    own = child.cpu_times()
                    self.workers[child.pid] = own.user + own.system


def stored_pages(db: Path) -> int:
    """Pages in the crawl's SQLite store so far (0 before it exists)."""
    if not db.exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            return int(conn.execute("SELECT count(*) FROM pages").fetchone()[0])
    except sqlite3.Error:
        return 0


def run_crawl(command: list[str], work: Path, stop_at: int | None = None) -> CrawlCpu:
    """Run `command` (a `nadird crawl` storing into work/nadird.db) to its end."""
    started = time.perf_counter()
    with open(work / "crawl.log", "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    sampler = _Sampler(proc.pid)
    interrupted, next_poll = False, started
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        sampler.sample()
        now = time.perf_counter()
        if now > started + RUN_TIMEOUT:
            proc.kill()
            raise RuntimeError(f"the crawl ran longer than {RUN_TIMEOUT}s; see {work}/crawl.log")
        if stop_at is not None and not interrupted and now >= next_poll:
            next_poll = now + 0.25
            if stored_pages(work / "nadird.db") >= stop_at:
                proc.send_signal(signal.SIGINT)
                interrupted = True
        time.sleep(SAMPLE_EVERY)
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0 and not (interrupted and code == STOPPED):
        raise RuntimeError(f"nadird crawl exited {code}; see {work}/crawl.log")
    total = usage.ru_utime + usage.ru_stime
    workers = max(sampler.waited, sum(sampler.workers.values()))
    return CrawlCpu(
        round(seconds, 2), round(total, 2), round(total - workers, 2), round(workers, 2)
    )
