"""Requests fetched again after master crashes, with lease adoption on and off.

Crawls the synthetic web (a small per-request latency) with a real master and
two real workers over loopback, kills the master with SIGKILL at two points of
the crawl, starts it again each time, and lets the crawl finish. The count is
the server's: requests for a URL it had already served (robots.txt aside).
Each run also checks that the store is exact and that no two workers fetched
one host at once.

    python scripts/bench_master_crash.py --hosts 12 --pages 300 --latency 0.02
    python scripts/bench_master_crash.py --runs 5 --adopt-only --logs /tmp/crash-logs
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from nadird import __version__
from nadird.testing.checks import (
    assert_exact_store,
    assert_one_worker_per_domain,
    expected_set,
    page_requests,
    start_crawl,
)
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

KILLS = (0.3, 0.65)  # fractions of the pages served when the master is killed


def one_run(args: argparse.Namespace, adopt: bool, run: int = 1) -> dict[str, Any]:
    graph = SiteGraph(hosts=args.hosts, pages=args.pages)
    total = len(expected_set(graph))
    master = {
        "lease_ttl": args.lease_ttl,
        "heartbeat_interval": args.lease_ttl / 6,
        "adopt_leases": adopt,
    }
    with tempfile.TemporaryDirectory() as tmp, Cluster(Path(tmp) / "cluster") as cluster:
        with run_in_thread(graph, latency=args.latency) as web:
            started = time.monotonic()
            proc = start_crawl(cluster, graph, master=master, politeness={"delay": args.delay})
            in_flight = []
            for point in KILLS:
                if not wait_until(lambda p=point: len(page_requests(web)) > p * total, 300):
                    raise SystemExit(f"the crawl did not reach {point:.0%} in 300 s")
                proc.kill(signal.SIGKILL)
                killed = time.time()
                proc.popen.wait(10)
                in_flight.append(
                    sum(1 for e in page_requests(web) if e.t_start <= killed <= e.t_end)
                )
                proc = cluster.start_again("master", cluster.workdir / "master.yaml")
            if cluster.wait(proc, 600) != 0:
                raise SystemExit("the master did not finish the crawl")
            seconds = time.monotonic() - started
            entries = page_requests(web)
        if args.logs:  # the processes' logs, for a run to be looked into
            kept = Path(args.logs) / f"run-{run}-adopt-{adopt}"
            kept.mkdir(parents=True, exist_ok=True)
            for log in cluster.workdir.glob("*.log"):
                shutil.copy(log, kept)
        assert_exact_store(cluster, graph)
        assert_one_worker_per_domain(entries)
        events = Counter(e.get("event") for e in cluster.proc("master").logs())
        worker_events = Counter(
            e.get("event") for p in cluster.procs if p.name != "master" for e in p.logs()
        )
    counts = Counter((e.host, e.path) for e in entries)
    again = Counter(host for (host, _path), n in counts.items() for _ in range(n - 1))
    return {
        "adopt_leases": adopt,
        "pages": total,
        "requests": len(entries),
        "fetched_again": sum(n - 1 for n in counts.values()),
        "in_flight_at_kills": in_flight,
        "leases_adopted": events["lease_adopted"],
        # what tells where the requests fetched again came from
        "leases_unclaimed": events["leases_unclaimed"],
        "adoptions_refused": events["adoption_refused"],
        "workers_dropped_bags": worker_events["bags_dropped"],
        "fetched_again_by_host": dict(again),
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=12)
    parser.add_argument("--pages", type=int, default=300, help="pages per host")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds per request")
    parser.add_argument("--delay", type=float, default=0.05, help="politeness.delay")
    parser.add_argument("--lease-ttl", type=float, default=3.0)
    parser.add_argument("--runs", type=int, default=1, help="runs of each setting")
    parser.add_argument("--adopt-only", action="store_true", help="skip adopt_leases: false")
    parser.add_argument("--logs", metavar="DIR", help="keep each run's process logs here")
    args = parser.parse_args()
    print(
        json.dumps(
            {
                "nadird": __version__,
                "python": sys.version.split()[0],
                "machine": platform.platform(),
                "args": vars(args),
            }
        )
    )
    for run in range(1, args.runs + 1):
        for adopt in (True,) if args.adopt_only else (True, False):
            print(json.dumps(one_run(args, adopt, run)), flush=True)


if __name__ == "__main__":
    main()
