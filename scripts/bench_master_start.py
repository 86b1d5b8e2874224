"""Benchmark: a master's start time and memory without an article job.

    python scripts/bench_master_start.py [--baseline main] [--runs 5]

Starts `python -m nadird --role master` on a config with one job and no
`article:` (a fresh state directory and SQLite store each run), as a user
does, once per run with the code of --baseline (a git ref, unpacked with
`git archive`) and with this tree's, alternately. The start time runs
from the process's spawn to its READY=1 (sd_notify, read on a socket of
this script's): interpreter, imports, store and state opened, sockets
bound. The memory is the process's VmRSS right then (Linux /proc), and
whether numpy is mapped into it (/proc/PID/maps). The master is then
stopped with SIGTERM. Prints one JSON object for docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from bench_export_changes import LAUNCHER, baseline_tree, run_facts  # scripts/ on sys.path
from support import REPO

READY_TIMEOUT = 60.0


def master_config(work: Path) -> dict[str, Any]:
    return {
        "node": "master",
        "log_level": "warning",
        "master": {
            "bind": f"ipc://{work}/control",
            "results_bind": f"ipc://{work}/results",
            "state_dir": str(work / "state"),
        },
        "store": {"uri": f"sqlite:///{work / 'store.db'}"},
        "api": {"port": 0},
        # The shipped config's job: fields and links, no article.
        "jobs": {
            "default": {
                "fields": {"title": [{"xpath": "//title/text()"}]},
                "links": {"scope": "same-domain"},
                "max_depth": 5,
            }
        },
        "seeds": ["http://example.test/"],
    }


def vm(pid: int, key: str) -> float:
    """A /proc/PID/status figure in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def start_once(code: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ndstart", dir="/tmp") as tmp:
        work = Path(tmp)
        config = work / "master.yaml"
        config.write_text(yaml.safe_dump(master_config(work)), encoding="utf-8")
        notify = work / "notify"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.bind(str(notify))
            sock.settimeout(READY_TIMEOUT)
            began = time.monotonic()
            proc = subprocess.Popen(
                [sys.executable, "-c", LAUNCHER, str(code), "--role", "master", "-c", str(config)],
                env={**os.environ, "NOTIFY_SOCKET": str(notify)},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                while b"READY=1" not in sock.recv(4096):
                    pass
                ready_s = time.monotonic() - began
                maps = Path(f"/proc/{proc.pid}/maps").read_text()
                run = {
                    "ready_s": ready_s,
                    "rss_mib": vm(proc.pid, "VmRSS"),
                    "numpy_mapped": "numpy" in maps,
                }
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
    return run


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "ready_s_median": round(statistics.median(r["ready_s"] for r in runs), 3),
        "ready_s_min": round(min(r["ready_s"] for r in runs), 3),
        "rss_mib_median": round(statistics.median(r["rss_mib"] for r in runs), 1),
        "numpy_mapped": sorted({r["numpy_mapped"] for r in runs}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git ref to compare with")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        codes = {
            f"baseline ({args.baseline})": baseline_tree(args.baseline, Path(tmp) / "baseline"),
            "this tree": REPO,
        }
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in codes}
        for _ in range(args.runs):
            for name, code in codes.items():  # alternately: the machine's load hits both
                runs[name].append(start_once(code))
    print(json.dumps({**run_facts(), "runs": args.runs, **{
        name: summary(found) for name, found in runs.items()
    }}, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
