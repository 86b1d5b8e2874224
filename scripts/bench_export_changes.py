"""Benchmark: `nadird export --changes` over a long page history, peak memory and rate.

    python scripts/bench_export_changes.py [--versions 1000000] [--urls 100000]
                                           [--baseline main] [--since-share 0.1]

Writes --versions versions of --urls pages (each page's versions apart in
time, as a revisiting crawl writes them: every page once, then every page
again, ...) into the `changes` table of a real SQLite store (made by
`SqliteStore.open`, filled with one INSERT per version in one
transaction: the store's own write path would add pages and take far
longer). Then runs `python -m nadird export --changes --out /dev/null` in
a subprocess, as a user runs it, once with the code of --baseline (a git
ref, unpacked with `git archive` into a temporary directory and put first on
PYTHONPATH) and once with this tree's code, and again each with `--since`
the last --since-share of the history. The peak RSS is the subprocess's
own (wait4); rows/s counts the changes printed per wall second, start-up
and opening the store included.

The baseline runs first: both codes then find their indexes already built
(the base store holds the baseline's `changes_url` too, and this tree's
code drops it at open). Prints one JSON object for docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

from support import REPO

ROOT = REPO
sys.path.insert(0, str(ROOT))

from nadird.store.sqlite.store import SqliteStore  # noqa: E402

T0 = 1_764_000_000.0
STEP = 0.01  # seconds between two versions


def build_store(path: Path, versions: int, urls: int) -> None:
    """An empty store with this tree's schema, then the versions."""

    async def create() -> None:
        store = SqliteStore(str(path))
        await store.open()
        await store.close()

    asyncio.run(create())
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO changes (url, job, fetched_at, signature, data) VALUES (?, ?, ?, ?, ?)",
            (_version(k, urls) for k in range(versions)),
        )
        db.execute("COMMIT")
        # The index the baseline looks versions up by, so that it builds none.
        db.execute("CREATE INDEX IF NOT EXISTS changes_url ON changes (url, fetched_at)")


def _version(k: int, urls: int) -> tuple[str, str, float, str, str]:
    page, round_no = k % urls, k // urls
    job = "shop" if page % 4 else "news"  # a quarter in a second job
    price = 100 + (round_no * 7 + page) % 50
    data = {"title": f"Item {page}", "price": price, "stock": round_no % 3 != 0}
    url = f"http://shop-{page % 97}.test/item/{page}"
    return url, job, T0 + k * STEP, f"{round_no}:{price}", json.dumps(data)


def baseline_tree(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", ref, "nadird"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


# Runs `python -m nadird` from the directory in argv[1]: the editable
# install's import hook would otherwise win over PYTHONPATH.
LAUNCHER = """
import runpy, sys
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
sys.path.insert(0, sys.argv.pop(1))
import nadird
if sys.argv[1] == "--where":
    print(nadird.__file__)
else:
    runpy.run_module("nadird", run_name="__main__", alter_sys=True)
"""


def run_export(code: Path, store: Path, since: float | None) -> dict[str, Any]:
    """One export in a subprocess running `code`'s nadird: wall, peak RSS."""
    env = dict(os.environ)
    probe = [sys.executable, "-c", LAUNCHER, str(code), "--where"]
    used = subprocess.run(probe, env=env, capture_output=True, text=True, check=True).stdout
    assert used.startswith(str(code)), f"{used.strip()} is not the code of {code}"
    command = [sys.executable, "-c", LAUNCHER, str(code), "export", "--changes"]
    command += ["--store", f"sqlite:///{store}", "--out", os.devnull]
    if since is not None:
        command += ["--since", repr(since)]
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    message = child.stderr.read() if child.stderr is not None else ""
    if status != 0:
        raise SystemExit(f"export failed ({status}): {message}")
    # "exported N changes" is the last line the command writes to stderr.
    changes = int(message.strip().splitlines()[-1].split()[1])
    return {
        "changes": changes,
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),  # KiB on Linux
        "changes_per_s": round(changes / wall),
        # The machine is shared: per CPU second compares runs better.
        "changes_per_cpu_s": round(changes / (usage.ru_utime + usage.ru_stime)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--versions", type=int, default=1_000_000)
    parser.add_argument("--urls", type=int, default=100_000)
    parser.add_argument("--baseline", default="main", help="git ref of the code to compare with")
    parser.add_argument("--since-share", type=float, default=0.1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nadird-bench-") as tmp:
        work = Path(tmp)
        store = work / "history.db"
        started = time.perf_counter()
        build_store(store, args.versions, args.urls)
        built = time.perf_counter() - started
        old = baseline_tree(args.baseline, work / "baseline")
        since = T0 + args.versions * STEP * (1 - args.since_share)
        runs = {}
        for name, code in ((f"baseline ({args.baseline})", old), ("this tree", ROOT)):
            runs[name] = run_export(code, store, None)
            runs[f"{name}, --since"] = run_export(code, store, since)
        size = store.stat().st_size
    print(json.dumps(_summary(args, built, size, runs), indent=2))


def run_facts() -> dict[str, str]:
    """When, on what machine and at which commit a benchmark ran (this
    script's and bench_export_since.py's summaries)."""
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, {platform.platform()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "commit": subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip(),
    }


def _summary(
    args: argparse.Namespace, built: float, size: int, runs: dict[str, Any]
) -> dict[str, Any]:
    return {
        **run_facts(),
        "versions": args.versions,
        "urls": args.urls,
        "since_share": args.since_share,
        "store_mib": round(size / 2**20, 1),
        "build_s": round(built, 1),
        "runs": runs,
    }


if __name__ == "__main__":
    main()
