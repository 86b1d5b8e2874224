"""nginx, the three crawlers' commands and one timed, checked run, for
scripts/bench_real_site.py (see its docstring for what is measured)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import yaml
from bench_common import Throughput
from pyspy_top import top_functions
from real_site_walk import key, key_of_request

HERE = Path(__file__).resolve().parent
NGINX = "/usr/sbin/nginx"
RUN_TIMEOUT = 1800.0  # seconds: a crawl that takes longer than this is killed
RSS_EVERY = 0.2  # seconds between samples of the process tree's memory


@dataclass
class Site:
    roots: dict[str, Path]  # "127.0.0.N:PORT" -> directory served there
    seeds: list[str]


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    access_log: Path

    def log_size(self) -> int:
        return self.access_log.stat().st_size if self.access_log.exists() else 0

    def requests_since(self, offset: int) -> Counter[str]:
        """key -> times requested, from the access log lines after `offset`."""
        counts: Counter[str] = Counter()
        with open(self.access_log, "rb") as log:
            log.seek(offset)
            for line in log.read().decode("utf-8", "replace").splitlines():
                origin, _, rest = line.partition("\t")
                request_uri = rest.partition("\t")[0]
                counts[key_of_request(origin, request_uri)] += 1
        return counts

    def cpu(self) -> float:
        """CPU seconds of nginx's master and worker so far."""
        top = psutil.Process(self.proc.pid)
        procs = [top, *top.children(recursive=True)]
        return float(sum(p.cpu_times().user + p.cpu_times().system for p in procs))


def nginx_config(site: Site, conf_dir: Path) -> str:
    servers = "\n".join(
        f"  server {{ listen {origin}; root {root}; index index.html; }}"
        for origin, root in site.roots.items()
    )
    return f"""daemon off;
worker_processes 1;
pid {conf_dir}/nginx.pid;
error_log {conf_dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  log_format bench '$server_addr:$server_port\\t$request_uri\\t$status';
  access_log {conf_dir}/access.log bench;
  client_body_temp_path {conf_dir}/body;
  proxy_temp_path {conf_dir}/proxy;
  fastcgi_temp_path {conf_dir}/fastcgi;
  uwsgi_temp_path {conf_dir}/uwsgi;
  scgi_temp_path {conf_dir}/scgi;
  sendfile on;
  keepalive_requests 100000;
{servers}
}}
"""


@contextlib.contextmanager
def nginx(site: Site, conf_dir: Path) -> Iterator[Server]:
    conf = conf_dir / "nginx.conf"
    conf.write_text(nginx_config(site, conf_dir), encoding="utf-8")
    proc = subprocess.Popen([NGINX, "-p", str(conf_dir), "-c", str(conf)])
    server = Server(proc, conf_dir / "access.log")
    try:
        _wait_until_serving(site, server)
        yield server
    finally:
        proc.send_signal(signal.SIGQUIT)  # graceful stop
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_until_serving(site: Site, server: Server) -> None:
    import urllib.request

    deadline = time.monotonic() + 10
    while True:
        if server.proc.poll() is not None:
            raise SystemExit(f"nginx exited {server.proc.returncode}: see its error log")
        try:
            for seed in site.seeds:
                urllib.request.urlopen(seed, timeout=2).read()
            _check_own_log(server)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _check_own_log(server: Server) -> None:
    """The seeds answered: make sure it was this nginx. One that could not bind
    its port exits a moment later, while another server on the port answers,
    and the benchmark would crawl that one."""
    time.sleep(0.5)  # nginx writes its access log line after the answer
    if server.proc.poll() is not None or server.log_size() == 0:
        raise SystemExit("another server answers on the benchmark's ports: choose --port")


# ---------------------------------------------------------------- crawlers


def nadird_command(args: argparse.Namespace, site: Site, work: Path) -> list[str]:
    config = {
        "log_level": "warning",
        "jobs": {"default": {"robots": False, "fields": {"title": [{"css": "title"}]}}},
        "worker": {"bags": args.bags},
        # Neither peer keeps bodies or throttles adaptively.
        "fetch": {"store_body_bytes": 0, "throttle": {"adaptive": False}},
    }
    return nadird_crawl_line(args, site, work, config)


def nadird_crawl_line(
    args: argparse.Namespace, site: Site, work: Path, config: dict[str, Any]
) -> list[str]:
    """`nadird crawl` of the site's seeds with `config` written to work/nadird.yaml."""
    path = work / "nadird.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    command = [
        shutil.which("nadird") or "nadird", "crawl", *site.seeds,
        "--config", str(path), "--workers", str(args.workers),
        "--allow-private", "--delay", "0", "--domain-concurrency", str(args.per_domain),
        "--store", f"sqlite:///{work / 'nadird.db'}", "--state-dir", str(work / "state"),
        "--log-level", "warning",
    ]  # fmt: skip
    for origin in site.roots:
        command += ["--allow-domain", origin.split(":")[0]]
    return command


def scrapy_command(args: argparse.Namespace, site: Site, work: Path) -> list[str]:
    seeds = work / "seeds.txt"
    seeds.write_text("\n".join(site.seeds) + "\n", encoding="utf-8")
    return [
        sys.executable, str(HERE / "bench_scrapy_spider.py"), "--seeds-file", str(seeds),
        "--hosts", ",".join(o.split(":")[0] for o in site.roots), "--out", str(work / "out.jsonl"),
        "--concurrency", str(args.per_domain * len(site.roots)),
        "--per-domain", str(args.per_domain), "--title-only",
    ]  # fmt: skip


def crawlee_command(args: argparse.Namespace, site: Site, work: Path) -> list[str]:
    seeds = work / "seeds.txt"
    seeds.write_text("\n".join(site.seeds) + "\n", encoding="utf-8")
    return [
        sys.executable, str(HERE / "bench_crawlee_spider.py"), "--seeds-file", str(seeds),
        "--out", str(work / "out.jsonl"),
        "--concurrency", str(args.per_domain * len(site.roots)),
    ]  # fmt: skip


COMMANDS = {
    "nadird": nadird_command,
    "nadird-baseline": nadird_command,  # the same, with the code of --baseline
    "scrapy": scrapy_command,
    "crawlee": crawlee_command,
}


def records(crawler: str, work: Path) -> list[tuple[str, int]]:
    """(url, status) of every record the crawler stored."""
    if crawler.startswith("nadird"):
        with contextlib.closing(sqlite3.connect(work / "nadird.db")) as db:
            return list(db.execute("SELECT url, status FROM pages"))
    with open(work / "out.jsonl", encoding="utf-8") as feed:
        rows = [json.loads(line) for line in feed if line.strip()]
    return [(row["url"], row["status"]) for row in rows]


# ------------------------------------------------------------------- runs


@dataclass
class Run(Throughput):
    crawler: str
    pair: int
    seconds: float
    cpu_seconds: float
    server_cpu_seconds: float
    records: int
    correct: bool
    problems: list[str]
    peak_rss_mib: dict[str, float] = field(default_factory=dict)  # "top", "child-1", ...
    load_1min: float = 0.0


def _sample_rss(top: psutil.Process, peaks: dict[int, tuple[float, int]]) -> None:
    """peaks: pid -> (peak RSS MiB, order first seen)."""
    try:
        procs = [top, *top.children(recursive=True)]
    except psutil.Error:
        return
    for proc in procs:
        try:
            rss = proc.memory_info().rss / 2**20
        except psutil.Error:
            continue
        old = peaks.get(proc.pid, (0.0, len(peaks)))
        peaks[proc.pid] = (max(old[0], rss), old[1])


def timed(
    command: list[str], log: Path, env: dict[str, str] | None = None
) -> tuple[float, float, dict[str, float]]:
    """(wall s, user+sys CPU s of the process tree, peak RSS MiB per process)."""
    started = time.perf_counter()
    with open(log, "wb") as out:
        # In the log's directory: `python -m nadird` (the workers) puts its
        # working directory first on sys.path, before PYTHONPATH, so from a
        # checkout the baseline's workers would import the checkout's code.
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=log.parent
        )
    top = psutil.Process(proc.pid)
    peaks: dict[int, tuple[float, int]] = {}
    next_sample = started
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        now = time.perf_counter()
        if now > started + RUN_TIMEOUT:
            proc.kill()
            raise RuntimeError(f"{command[0]} ran longer than {RUN_TIMEOUT}s; see {log}")
        if now >= next_sample:
            _sample_rss(top, peaks)
            next_sample = now + RSS_EVERY
        time.sleep(0.02)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{command[:2]} exited {proc.returncode}; see {log}")
    ordered = sorted(peaks.items(), key=lambda kv: kv[1][1])
    rss = {
        ("top" if p == proc.pid else f"child-{i}"): round(v[0], 1)
        for i, (p, v) in enumerate(ordered)
    }
    return seconds, usage.ru_utime + usage.ru_stime, rss


def check(
    found: list[tuple[str, int]], expected: dict[str, int], requested: Counter[str]
) -> list[str]:
    """What is wrong with a run; empty when it is right."""
    problems: list[str] = []
    keys = Counter(key(url) for url, _ in found)
    twice = sorted(k for k, n in keys.items() if n > 1)
    missing = sorted(set(expected) - set(keys))
    extra = sorted(set(keys) - set(expected))
    wrong = sorted(key(u) for u, s in found if key(u) in expected and expected[key(u)] != s)
    again = sorted(k for k in expected if requested[k] != 1)
    stray = sorted(set(requested) - set(expected))
    for label, items in (("stored twice", twice), ("missing", missing), ("not expected", extra),
                         ("wrong status", wrong), ("not requested once", again),
                         ("requested, not expected", stray)):  # fmt: skip
        if items:
            problems.append(f"{len(items)} {label}: {items[:3]}")
    return problems


def run_one(
    crawler: str,
    pair: int,
    args: argparse.Namespace,
    site: Site,
    server: Server,
    expected: dict[str, int],
    work: Path,
) -> Run:
    command = COMMANDS[crawler](args, site, work)
    env = None
    if crawler == "nadird-baseline":  # its master and workers import the other code
        env = {**os.environ, "PYTHONPATH": str(Path(args.baseline).resolve())}
    load, cpu_before, log_offset = os.getloadavg()[0], server.cpu(), server.log_size()
    seconds, cpu, rss = timed(command, work / "crawl.log", env)
    time.sleep(0.2)  # nginx writes its log line after the response
    found = records(crawler, work)
    problems = check(found, expected, server.requests_since(log_offset))
    run = Run(
        crawler=crawler,
        pair=pair,
        seconds=round(seconds, 3),
        cpu_seconds=round(cpu, 3),
        server_cpu_seconds=round(server.cpu() - cpu_before, 3),
        records=len(found),
        correct=not problems,
        problems=problems,
        peak_rss_mib=rss,
        load_1min=round(load, 2),
    )
    if problems:
        print(f"  {crawler}: {'; '.join(problems)} (files kept in {work})", file=sys.stderr)
    elif not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return run


def profile(args: argparse.Namespace, site: Site, server: Server) -> None:
    """One nadird crawl under py-spy (all processes); prints the hottest functions."""
    out = Path(args.profile)
    out.mkdir(parents=True, exist_ok=True)
    work = out / "nadird-run"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    raw = out / "nadird.txt"
    spy = ["py-spy", "record", "--subprocesses", "--format", "raw", "--rate", "200",
           "--nonblocking", "--function", "-o", str(raw), "--"]  # fmt: skip
    timed(spy + nadird_command(args, site, work), work / "crawl.log")
    print(f"== nadird: top functions by own samples ({raw})")
    for line in top_functions(raw, args.top):
        print(line)
