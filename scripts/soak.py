"""Memory, open files and disk of a continuous crawl over hours, with crashes.

A living web (nadird.testing.living, its own process) serves --pages pages on
loopback; a master and two workers run as daemons (real processes, their
configs, state dir and SQLite store under OUT/cluster) and revisit every page
about every --every seconds. A timeline repeats every --kill-period seconds
until --kills-until:

    0.2  kill -9 of worker w1, started again at once
    0.4  SIGHUP of the master (config re-read)
    0.6  kill -9 of the master, started again at once
    0.8  kill -9 of the master and of w1 together, both started again

w2 is never killed: its memory is one process's over the whole run. Every
--sample seconds each live process's RSS, open file descriptors and CPU time
and the disk under the master (state dir + store files) go to OUT/samples.csv;
kills, restarts and unexpected exits go to OUT/events.jsonl; the master's
/api/stats to OUT/stats.jsonl. At the end the growth per role after the
warm-up is fitted by least squares (MB/h; each process incarnation gets its
own intercept, so a restart's drop is not read as a fall) and written to
OUT/summary.json. A restarted process's first --rewarm seconds are left out.

    python scripts/soak.py --duration 300 --warmup 60 --pages 2000 --every 40 \
        --kill-period 120 --out /tmp/soak-short
    python scripts/soak.py --summarize OUT [--warmup S] [--until S]   # from samples.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import select
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from soak_fit import activity, summarize  # scripts/: on sys.path when run as a script

from nadird import __version__
from nadird.testing.cluster import Cluster, Proc

TIMELINE = ((0.2, "kill-worker"), (0.4, "hup-master"), (0.6, "kill-master"), (0.8, "kill-both"))
FIELDS = ["t", "role", "name", "pid", "started", "rss_mb", "fds", "cpu_s", "disk_mb"]
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def proc_sample(pid: int) -> dict[str, float] | None:
    """RSS (MiB), open fds and CPU seconds of a live process, from /proc."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
            rss_pages = int(statm.read().split()[1])
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None  # it died between the poll and the read
    cpu = (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime
    return {"rss_mb": rss_pages * PAGE_SIZE / 2**20, "fds": fds, "cpu_s": cpu}


def disk_mb(paths: list[Path]) -> float:
    """Bytes on disk (allocated blocks) under the given files and directories."""
    total = 0
    for path in paths:
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        for file in files:
            try:
                total += file.stat().st_blocks * 512
            except FileNotFoundError:
                continue  # a temporary file renamed away meanwhile
    return total / 2**20


def start_living_web(args: argparse.Namespace, out: Path) -> tuple[subprocess.Popen[str], Any]:
    command = [sys.executable, "-m", "nadird.testing.living", "--pages", str(args.pages)]
    command += ["--scale", str(args.scale), "--seed", str(args.seed), "--port", "0"]
    log = open(out / "living.err", "w", encoding="utf-8")  # noqa: SIM115
    web = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
    assert web.stdout is not None
    ready, _, _ = select.select([web.stdout], [], [], 60)
    if not ready:
        web.kill()
        raise SystemExit("the living web did not start in 60 s")
    return web, json.loads(web.stdout.readline())


def master_config(cluster: Cluster, args: argparse.Namespace, seeds: list[str]) -> dict[str, Any]:
    job = {
        "revisit": {"every": f"{args.every}s"},
        "signature_ignore": [".ad", "footer"],
        "links": {"scope": "same-domain", "deny": ["/cart"]},
    }
    return cluster.master_config(
        jobs={"living": job},
        seeds=[{"url": url, "job": "living"} for url in seeds],
        master={"exit_when_done": False, "lease_ttl": 10.0, "heartbeat_interval": 1.0},
        politeness={"delay": args.delay},
        store={"flush_interval": 1.0},
    )


class Soak:
    """The processes, the timeline and the files the samples go to."""

    def __init__(self, cluster: Cluster, out: Path, started: float) -> None:
        self.cluster = cluster
        self.started = started
        self.born: dict[int, float] = {}  # pid -> run time it was started at
        self.expected_exit: set[int] = set()  # pids this script killed
        self.events = open(out / "events.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        self.stats = open(out / "stats.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        self.samples_file = open(out / "samples.csv", "w", newline="", encoding="utf-8")  # noqa: SIM115
        self.samples = csv.DictWriter(self.samples_file, FIELDS)
        self.samples.writeheader()

    def now(self) -> float:
        return time.monotonic() - self.started

    def event(self, kind: str, **fields: Any) -> None:
        line = {"t": round(self.now(), 2), "event": kind, **fields}
        self.events.write(json.dumps(line) + "\n")
        self.events.flush()
        print(json.dumps(line), flush=True)

    def start(self, role: str, name: str, config: dict[str, Any] | None = None) -> Proc:
        if config is not None:
            proc = self.cluster.start(role, name, config)
        else:
            path = self.cluster.workdir / f"{name}.yaml"
            proc = self.cluster.start_again(name, path, role=role)
        self.born[proc.popen.pid] = self.now()
        self.event("started", name=name, pid=proc.popen.pid)
        return proc

    def kill(self, name: str) -> None:
        proc = self.cluster.proc(name)
        self.expected_exit.add(proc.popen.pid)
        proc.kill(signal.SIGKILL)
        proc.popen.wait(30)
        self.event("killed", name=name, pid=proc.popen.pid)

    def act(self, action: str) -> None:
        role_of = {"master": "master", "w1": "worker"}
        if action == "hup-master":
            self.cluster.proc("master").kill(signal.SIGHUP)
            self.event("hup", name="master")
            return
        names = {"kill-worker": ["w1"], "kill-master": ["master"], "kill-both": ["master", "w1"]}
        for name in names[action]:
            self.kill(name)
        for name in names[action]:
            self.start(role_of[name], name)

    def restart_the_dead(self) -> None:
        """A daemon that exited on its own is recorded and started again."""
        for name, role in (("master", "master"), ("w1", "worker"), ("w2", "worker")):
            proc = self.cluster.proc(name)
            code = proc.popen.poll()
            if code is not None and proc.popen.pid not in self.expected_exit:
                self.expected_exit.add(proc.popen.pid)
                self.event("exited", name=name, pid=proc.popen.pid, returncode=code)
                self.start(role, name)

    def sample(self) -> None:
        t = round(self.now(), 1)
        disk = disk_mb([self.cluster.workdir / "state", *self.cluster.workdir.glob("store.db*")])
        for name, role in (("master", "master"), ("w1", "worker"), ("w2", "worker")):
            proc = self.cluster.proc(name)
            measured = proc_sample(proc.popen.pid)
            if measured is None or proc.popen.poll() is not None:
                continue
            row = {"t": t, "role": role, "name": name, "pid": proc.popen.pid}
            row["started"] = round(self.born[proc.popen.pid], 1)
            row["disk_mb"] = round(disk, 3) if role == "master" else ""
            row.update({k: round(v, 3) for k, v in measured.items()})
            self.samples.writerow(row)
        self.samples_file.flush()
        self.sample_stats(t)

    def sample_stats(self, t: float) -> None:
        state = self.cluster.workdir / "state"
        try:
            url = json.loads((state / "api.json").read_text())["url"]
            token = (state / "api.token").read_text().strip()
            request = urllib.request.Request(
                url + "/api/stats", headers={"Authorization": f"Bearer {token}"}
            )
            with urllib.request.urlopen(request, timeout=5) as response:
                stats = json.loads(response.read())
        except (OSError, ValueError, KeyError):
            return  # the master is restarting: no stats this time
        flat = {k: v for k, v in stats.items() if isinstance(v, (int, float))}
        self.stats.write(json.dumps({"t": t, **flat}) + "\n")
        self.stats.flush()


def timeline(args: argparse.Namespace) -> list[tuple[float, str]]:
    if args.kill_period <= 0:
        return []
    actions = []
    cycle = 0
    while cycle * args.kill_period < min(args.kills_until, args.duration):
        for fraction, action in TIMELINE:
            at = (cycle + fraction) * args.kill_period
            if at < min(args.kills_until, args.duration):
                actions.append((at, action))
        cycle += 1
    return actions


def run(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    web, living = start_living_web(args, out)
    print(json.dumps({"living_web": living["port"], "hosts": len(living["hosts"])}), flush=True)
    try:
        with Cluster(out / "cluster") as cluster:
            soak = Soak(cluster, out, time.monotonic())
            soak.start("master", "master", master_config(cluster, args, living["seeds"]))
            for i in (1, 2):
                worker = cluster.worker_config(i)
                worker["worker"]["exit_when_done"] = False
                soak.start("worker", f"w{i}", worker)
            drive(soak, args, timeline(args))
    finally:
        web.terminate()
        web.wait(30)
    fits = summarize(out / "samples.csv", args.warmup, args.rewarm)
    return {**fits, "activity": activity(out, args.warmup)}


def drive(soak: Soak, args: argparse.Namespace, actions: list[tuple[float, str]]) -> None:
    """The main loop: the timeline's actions and the samples, until the end."""
    next_sample = 0.0
    while (now := soak.now()) < args.duration:
        while actions and actions[0][0] <= now:
            soak.act(actions.pop(0)[1])
        soak.restart_the_dead()
        if now >= next_sample:
            soak.sample()
            next_sample += args.sample
        wake = min([next_sample, args.duration] + [a[0] for a in actions[:1]])
        time.sleep(max(0.05, min(wake - soak.now(), 5.0)))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=7200, help="seconds of crawling")
    parser.add_argument("--warmup", type=float, default=1800, help="seconds left out of fits")
    parser.add_argument("--rewarm", type=float, default=120, help="left out after a restart")
    parser.add_argument("--pages", type=int, default=2000, help="pages of the living web")
    parser.add_argument("--every", type=float, default=40, help="revisit interval, seconds")
    parser.add_argument("--delay", type=float, default=0.1, help="politeness.delay")
    parser.add_argument("--scale", type=float, default=1.0, help="living web's time scale")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sample", type=float, default=10, help="seconds between samples")
    parser.add_argument("--kill-period", type=float, default=900, help="0: no kills")
    parser.add_argument("--kills-until", type=float, default=float("inf"), help="seconds")
    parser.add_argument("--out", type=Path, default=Path("soak-out"))
    parser.add_argument("--summarize", type=Path, help="only fit OUT/samples.csv")
    parser.add_argument("--until", type=float, default=float("inf"), help="with --summarize")
    return parser.parse_args()


def plain(value: Any) -> Any:
    """An argument as JSON holds it (a path as text, no limit as null)."""
    if isinstance(value, Path):
        return str(value)
    return None if value == float("inf") else value


def main() -> None:
    args = parse_args()
    if args.summarize is not None:
        out = args.summarize
        fits = summarize(out / "samples.csv", args.warmup, args.rewarm, args.until)
        fits["activity"] = activity(out, args.warmup, args.until)
        print(json.dumps(fits, indent=2))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    header = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "nadird": __version__,
        "python": sys.version.split()[0],
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "args": {k: plain(v) for k, v in vars(args).items()},
    }
    print(json.dumps(header), flush=True)
    summary = {**header, **run(args, args.out)}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2), flush=True)


if __name__ == "__main__":
    main()
