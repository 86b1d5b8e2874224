"""Master capacity: a real master process driven by simulated workers.

No HTTP anywhere: the simulated workers (asyncio tasks in this process, one
DEALER and one PUSH socket each, like real workers) speak the real protocol
over ipc:// — Hello, Credit, Heartbeat — and answer every Bag at once with
Results (in batches of --result-batch pages, as workers send them) where each
page carries --new links never seen before and --known links already seen,
then BagDone and one more Credit. The master's frontier, seen set and store
live on tmpfs (/dev/shm), so the figures are the master's own CPU, not a disk.

Before each run the frontier is filled with --prefill URLs for each of
--domains domains (through the master's own admission code), so bags are full
from the first second. Rates are the master's counters (API /api/stats)
over a window after a warm-up; the master's CPU over the same window says
whether it was the bottleneck (~100 % of one core) or the simulator was.

    python scripts/bench_master_capacity.py --workers 1,8,64 --seconds 15
    python scripts/bench_master_capacity.py --workers 8 --profile /tmp/prof   # py-spy

Needs psutil (test extra); --profile needs py-spy.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import psutil
import yaml
import zmq
import zmq.asyncio
from pyspy_top import top_functions  # scripts/: on sys.path when run as a script

from nadird import __version__
from nadird.job.spec import Job

try:  # the package layout since the stages were regrouped
    from nadird.master.frontier.admission import Admission
    from nadird.master.frontier.queues import Frontier
    from nadird.master.frontier.seen import SeenSet
    from nadird.master.state.frontier_db import FrontierDB
except ImportError:  # a --baseline from before: flat master modules
    from nadird.master.admission import Admission  # type: ignore[no-redef, import-not-found]
    from nadird.master.frontier_db import FrontierDB  # type: ignore[no-redef, import-not-found]
    from nadird.master.seen import SeenSet  # type: ignore[no-redef, import-not-found]

    from nadird.master.frontier import Frontier  # type: ignore[no-redef, attr-defined]
from nadird.common.urls import fingerprint
from nadird.protocol.codec import VERSION

TOKEN = "bench-token-0123456789abcdef"
STOP_TIMEOUT = 120.0  # seconds the master may take to stop before it is killed


def pack(kind: str, **fields: Any) -> bytes:
    """A protocol frame built straight from a dict: the simulator must stay
    cheaper than the master it drives, so it skips the dataclasses."""
    packed: bytes = msgpack.packb({"v": VERSION, "k": kind, **fields}, use_bin_type=True)
    return packed


# -------------------------------------------------------------- link source


class Links:
    """New links (URLs never sent before, over all domains) and known ones."""

    def __init__(self, domains: int, known: list[tuple[str, bytes]]) -> None:
        self._domains = domains
        self._next = 0
        self._rng = random.Random(1)
        # Recently sent URLs: the master has them, so they are "known" links.
        self._pool = known
        self._pool_max = 200_000

    def new(self, count: int) -> tuple[list[str], list[bytes]]:
        urls = []
        start = self._next
        self._next += count
        rand = self._rng.randrange
        for i in range(start, start + count):
            # d<k>.com: each its own registrable domain (the unit of a lease).
            urls.append(f"http://www.d{rand(self._domains)}.com/catalog/item/{i}?ref=nav")
        # The URLs' real fingerprints: the master checks those of new links.
        fps = [fingerprint(url) for url in urls]
        if len(self._pool) < self._pool_max:
            self._pool.extend(zip(urls, fps, strict=True))
        else:
            at = rand(self._pool_max - count)
            self._pool[at : at + count] = list(zip(urls, fps, strict=True))
        return urls, fps

    def known(self, count: int) -> tuple[list[str], list[bytes]]:
        at = self._rng.randrange(max(1, len(self._pool) - count))
        chosen = self._pool[at : at + count]
        return [u for u, _ in chosen], [f for _, f in chosen]


# -------------------------------------------------------- simulated workers


@dataclass
class SimStats:
    bags: int = 0
    pages: int = 0
    links: int = 0
    resets: int = 0


@dataclass
class SimWorker:
    index: int
    ctx: zmq.asyncio.Context
    control: str
    results: str
    links: Links
    args: argparse.Namespace
    stats: SimStats
    node: str = ""
    session: bytes = b""  # Welcome.session, echoed in every Results
    leases: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.node = f"sim-{self.index}"

    async def run(self) -> None:
        dealer = self.ctx.socket(zmq.DEALER)
        push = self.ctx.socket(zmq.PUSH)
        for sock in (dealer, push):
            sock.setsockopt(zmq.LINGER, 0)
        dealer.connect(self.control)
        push.connect(self.results)
        beat = asyncio.create_task(self._heartbeats(dealer))
        try:
            await dealer.send(self._hello())
            while True:
                body = msgpack.unpackb(await dealer.recv(), raw=False)
                kind = body.get("k")
                if kind == "welcome":
                    self.session = body.get("session", b"")  # absent from an older --baseline
                    await dealer.send(pack("credit", node=self.node, bags=self.args.bags))
                elif kind == "bag":
                    await self._answer(body, dealer, push)
                elif kind == "reset":
                    self.stats.resets += 1
                    await dealer.send(self._hello())
        finally:
            beat.cancel()
            dealer.close()
            push.close()

    def _hello(self) -> bytes:
        return pack("hello", node=self.node, capacity=self.args.bags, pid=os.getpid())

    async def _heartbeats(self, dealer: zmq.asyncio.Socket) -> None:
        seq = 0
        while True:
            await asyncio.sleep(self.args.heartbeat)
            seq += 1
            msg = pack("heartbeat", node=self.node, leases=sorted(self.leases), seq=seq)
            await dealer.send(msg)

    async def _answer(
        self, bag: dict[str, Any], dealer: zmq.asyncio.Socket, push: zmq.asyncio.Socket
    ) -> None:
        """Every URL of the bag fetched at once; results in worker-sized batches."""
        lease, epoch = bag["lease"], bag["epoch"]
        self.leases.add(lease)
        args = self.args
        now = time.time()
        pages: list[dict[str, Any]] = []
        for url, fp, depth in zip(bag["urls"], bag["fps"], bag["depths"], strict=True):
            new_urls, new_fps = self.links.new(args.new)
            old_urls, old_fps = self.links.known(args.known)
            pages.append(
                {
                    "url": url,
                    "fp": fp,
                    "final_url": url,
                    "status": 200,
                    "fetched_at": now,
                    "depth": depth,
                    "content_type": "text/html",
                    "data": {"title": "A page", "price": "$1.00"},
                    "checksum": "0123456789abcdef0123456789abcdef",
                    "links": new_urls + old_urls,
                    "link_fps": new_fps + old_fps,
                }
            )
            if len(pages) == args.result_batch:
                await self._send_results(push, lease, epoch, pages)
                pages = []
        if pages:
            await self._send_results(push, lease, epoch, pages)
        self.leases.discard(lease)
        await dealer.send(pack("bag_done", node=self.node, lease=lease, epoch=epoch))
        await dealer.send(pack("credit", node=self.node, bags=1))
        self.stats.bags += 1

    async def _send_results(
        self, push: zmq.asyncio.Socket, lease: str, epoch: int, pages: list[dict[str, Any]]
    ) -> None:
        node = self.node
        # A --baseline master older than the session token refuses the field.
        token = {"session": self.session} if self.session else {}
        frame = pack(
            "results", node=node, lease=lease, epoch=epoch, job="default", pages=pages, **token
        )
        await push.send(frame)
        self.stats.pages += len(pages)
        self.stats.links += sum(len(p["links"]) for p in pages)


# ------------------------------------------------------------------ master


PREFILL_BATCH = 640


def prefill_urls(args: argparse.Namespace) -> Iterator[list[str]]:
    total = args.domains * args.prefill
    for base in range(0, total, PREFILL_BATCH):
        yield [
            f"http://www.d{i % args.domains}.com/start/{i}"
            for i in range(base, min(total, base + PREFILL_BATCH))
        ]


def prefill(state: Path, args: argparse.Namespace) -> None:
    """Queue --prefill URLs per domain through the master's admission code
    (run in the process of the code under test: its frontier schema)."""
    db = FrontierDB(state / "frontier.db")
    seen = SeenSet(args.expected_urls, args.fp_rate)
    admission = Admission(seen, Frontier(db), {"default": Job()})
    for urls in prefill_urls(args):
        admission.admit("default", urls, [fingerprint(u) for u in urls], depth=1)
        db.commit()  # a transaction's writes wait in memory until committed
    db.close()


def known_links(args: argparse.Namespace) -> list[tuple[str, bytes]]:
    """The first 200,000 prefilled URLs: links the master has seen."""
    known: list[tuple[str, bytes]] = []
    for urls in prefill_urls(args):
        if len(known) >= 200_000:
            break
        known.extend((u, fingerprint(u)) for u in urls)
    return known


def prefill_with(code: str | None, state: Path, work: Path) -> None:
    """Run this script's --prefill-into with the nadird package in `code`."""
    env = {**os.environ, "PYTHONPATH": code} if code else None
    command = [sys.executable, str(Path(__file__).resolve()), "--prefill-into", str(state)]
    subprocess.run(command + sys.argv[1:], env=env, cwd=work, check=True)


def master_config(work: Path, state: Path, args: argparse.Namespace) -> dict[str, Any]:
    return {
        "node": "master",
        "log_level": "warning",
        "master": {
            "bind": f"ipc://{work}/control",
            "results_bind": f"ipc://{work}/results",
            "state_dir": str(state),
            "bag_size": args.bag_size,
            "lease_ttl": 30.0,
            "heartbeat_interval": args.heartbeat,
            "recovery_grace": 0.0,
            "snapshot_interval": 3600.0,
        },
        "politeness": {"delay": 0.0},
        "bloom": {"expected_urls": args.expected_urls, "fp_rate": args.fp_rate},
        "store": {"uri": f"sqlite:///{state / 'store.db'}"},
        "api": {"port": 0, "token": TOKEN},
        # The simulated workers speak plain ZeroMQ: no keys (a key older
        # releases know too, for --baseline).
        "security": {"insecure": True},
        # The new links go to any domain (the master checks a job's scope).
        "jobs": {"default": {"links": {"scope": "any"}}},
    }


def api_stats(state: Path) -> dict[str, Any]:
    url = json.loads((state / "api.json").read_text(encoding="utf-8"))["url"]
    request = urllib.request.Request(
        url + "/api/stats", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        stats: dict[str, Any] = json.loads(response.read())
    return stats


async def wait_for_api(state: Path, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"master exited {proc.returncode} at start")
        if (state / "api.json").exists():
            with contextlib.suppress(OSError):
                await asyncio.to_thread(api_stats, state)
                return
        await asyncio.sleep(0.1)
    raise RuntimeError("master API did not come up")


def cpu_seconds(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return float(times.user + times.system)


async def measure(workers: int, args: argparse.Namespace, code: str | None) -> dict[str, Any]:
    """One run; `code` is a directory holding another nadird package to run
    as the master (PYTHONPATH), None for the installed one."""
    work = Path(tempfile.mkdtemp(prefix="ndcap-", dir="/tmp"))  # short ipc:// paths
    state = Path(tempfile.mkdtemp(prefix="ndcap-state-", dir=args.state_root))
    try:
        await asyncio.to_thread(prefill_with, code, state, work)
        known = known_links(args)
        config = work / "master.yaml"
        config.write_text(yaml.safe_dump(master_config(work, state, args)), encoding="utf-8")
        log = open(work / "master.log", "wb")  # noqa: SIM115 (closed below)
        command = [sys.executable, "-m", "nadird", "--role", "master", "-c", str(config)]
        env = {**os.environ, "PYTHONPATH": code} if code else None
        # cwd: not this tree, or `-m nadird` would import ./nadird whatever PYTHONPATH says.
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
        try:
            await wait_for_api(state, proc)
            result = await drive(workers, work, state, proc, known, args)
            return {"code": code or "installed", **result}
        finally:
            stop_master(proc)
            log.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


async def drive(
    workers: int,
    work: Path,
    state: Path,
    proc: subprocess.Popen[bytes],
    known: list[tuple[str, bytes]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    ctx = zmq.asyncio.Context()
    links = Links(args.domains, known)
    stats = SimStats()
    sims = [
        SimWorker(i, ctx, f"ipc://{work}/control", f"ipc://{work}/results", links, args, stats)
        for i in range(workers)
    ]
    tasks = [asyncio.create_task(s.run()) for s in sims]
    master = psutil.Process(proc.pid)
    me = psutil.Process()
    spy: subprocess.Popen[bytes] | None = None
    try:
        await asyncio.sleep(args.warmup)
        before = await asyncio.to_thread(api_stats, state)
        cpu0, my0, t0 = cpu_seconds(master), cpu_seconds(me), time.monotonic()
        if args.profile:
            spy = start_profile(proc.pid, workers, args)
        await asyncio.sleep(args.seconds)
        after = await asyncio.to_thread(api_stats, state)
        cpu1, my1, t1 = cpu_seconds(master), cpu_seconds(me), time.monotonic()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        ctx.term()
    if spy is not None:
        spy.wait(args.seconds + 60)
    window = t1 - t0
    pages = after.get("pages_ok", 0) - before.get("pages_ok", 0)
    master_cpu = cpu1 - cpu0
    return {
        "workers": workers,
        "window_s": round(window, 2),
        "bags_per_s": round((after.get("bags_done", 0) - before.get("bags_done", 0)) / window),
        "results_per_s": round(pages / window),
        "links_per_s": round(pages * (args.new + args.known) / window),
        "admitted_per_s": round((after["seen"] - before["seen"]) / window),
        "master_cpu_percent": round(100 * master_cpu / window, 1),
        "results_per_master_cpu_s": round(pages / master_cpu) if master_cpu else None,
        "simulator_cpu_percent": round(100 * (my1 - my0) / window, 1),
        "queued_at_end": after["queued"],
        "store_pending_at_end": after["store_pending"],
        "dropped_messages": after.get("dropped_messages", 0),
        "handler_errors": after.get("handler_errors", 0),
        "load_1min": round(os.getloadavg()[0], 2),
    }


def start_profile(pid: int, workers: int, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    out = Path(args.profile)
    out.mkdir(parents=True, exist_ok=True)
    command = [
        "py-spy", "record", "--pid", str(pid), "--duration", str(int(args.seconds)),
        "--rate", "250", "--nonblocking", "--function", "--format", "raw", *args.spy_args,
        "--output", str(out / f"master-{workers}w.txt"),
    ]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop_master(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,8,64", help="simulated worker counts to sweep")
    parser.add_argument("--seconds", type=float, default=15.0, help="measured window")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--new", type=int, default=2, help="new links per page")
    parser.add_argument("--known", type=int, default=18, help="already-seen links per page")
    parser.add_argument("--domains", type=int, default=2000)
    parser.add_argument("--prefill", type=int, default=100, help="queued URLs per domain")
    parser.add_argument("--bags", type=int, default=16, help="credits per simulated worker")
    parser.add_argument("--bag-size", type=int, default=50)
    parser.add_argument("--result-batch", type=int, default=32, help="pages per Results")
    parser.add_argument("--heartbeat", type=float, default=1.0)
    parser.add_argument("--expected-urls", type=int, default=10_000_000)
    parser.add_argument("--fp-rate", type=float, default=0.001)
    parser.add_argument("--state-root", default="/dev/shm", help="tmpfs for state and store")
    parser.add_argument("--profile", metavar="DIR", help="py-spy the master over each window")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--gil", dest="spy_args", action="store_const", const=["--gil"], default=[],
        help="profile only the thread holding the GIL (Python work, no waits)",
    )  # fmt: skip
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="also run the nadird package in DIR (before/after, alternated per worker count)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per worker count (and code)")
    parser.add_argument("--prefill-into", metavar="STATE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prefill_into:
        prefill(Path(args.prefill_into), args)
        return 0
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    header = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "nadird": __version__,
        "pyzmq": zmq.__version__,
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
        "args": vars(args),
    }
    print(json.dumps(header), flush=True)
    codes: list[str | None] = [args.baseline, None] if args.baseline else [None]
    for count in (int(w) for w in args.workers.split(",")):
        for _ in range(args.repeat):
            for code in codes:
                result = asyncio.run(measure(count, args, code))
                print(json.dumps(result), flush=True)
        if args.profile:
            raw = Path(args.profile) / f"master-{count}w.txt"
            if raw.exists():
                print(f"== master profile, {count} workers ({raw})")
                for line in top_functions(raw, args.top):
                    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
