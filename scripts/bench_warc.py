"""What the web archive costs: the same real-site crawl with and without --warc.

nginx serves Debian doc trees on loopback (as scripts/bench_real_site.py
does); `nadird crawl` crawls them alternately without and with `--warc`,
`--pairs` times, each run checked against an offline walk of the trees and
nginx's access log (every page stored once, requested once). Measured per
run: wall time, CPU of the crawl's process tree (master and workers), pages
per CPU-second, the store's bytes on disk (bodies kept, fetch.store_body_bytes
at its default) and, with --warc, the archive's bytes. The summary gives the
archive's share of the crawl's CPU and its bytes per page against the store's.

Then, in this process, the master's side alone: Archive.add on results
messages holding real pages of the trees (gzip-encoded as a server would send
them), as results per second and CPU microseconds per page.

    python scripts/bench_warc.py --trees python,django --pairs 2

Needs nginx at /usr/sbin/nginx, psutil (the `bench` extra) and the doc
packages of the trees (python3.11-doc, python-django-doc, ...).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

from bench_real_run import Server, Site, check, nadird_crawl_line, nginx, records, timed
from bench_real_site import TREES, expected_pages, median, site_of

from nadird import __version__
from nadird.common.urls import fingerprint
from nadird.config import Config, MasterConfig, WarcConfig
from nadird.master.archive.service import Archive
from nadird.master.observe.health import StateHealth
from nadird.protocol.exchange import Exchange
from nadird.protocol.messages import PageResult, Results


def command(args: argparse.Namespace, site: Site, work: Path, warc: bool) -> list[str]:
    config = {
        "log_level": "warning",
        "jobs": {"default": {"robots": False, "fields": {"title": [{"css": "title"}]}}},
        "worker": {"bags": args.bags},
        "fetch": {"throttle": {"adaptive": False}},
    }
    if warc:  # --warc DIR takes the file's warc: section, dir aside
        config["warc"] = {"dir": str(work / "warc"), "gzip_level": args.gzip_level}
    line = nadird_crawl_line(args, site, work, config)
    return line + (["--warc", str(work / "warc")] if warc else [])


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def crawl(
    args: argparse.Namespace, site: Site, server: Server, expected: dict[str, int], warc: bool
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-warc-", dir=args.workdir))
    offset = server.log_size()
    seconds, cpu, _ = timed(command(args, site, work, warc), work / "crawl.log")
    time.sleep(0.2)  # nginx writes its log line after the response
    found = records("nadird", work)
    problems = check(found, expected, server.requests_since(offset))
    store = sum(size_of(p) for p in work.glob("nadird.db*"))
    run = {
        "warc": warc,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "pages": len(found),
        "pages_per_cpu_s": round(len(found) / cpu, 1),
        "store_bytes": store,
        "warc_bytes": size_of(work / "warc") if warc else 0,
        "warc_files": len(list((work / "warc").glob("*.warc.gz"))) if warc else 0,
        "correct": not problems,
        "problems": problems,
    }
    if not problems:
        shutil.rmtree(work, ignore_errors=True)
    return run


def sample_pages(site: Site, count: int) -> list[tuple[str, bytes]]:
    """(URL, HTML) of up to `count` pages of the trees, chosen at random."""
    found = []
    for origin, root in site.roots.items():
        for path in root.rglob("*.html"):
            found.append((f"http://{origin}/{path.relative_to(root)}", path))
    picked = random.Random(7).sample(found, min(count, len(found)))
    return [(url, path.read_bytes()) for url, path in picked]


def result_of(url: str, html: bytes, encoded: bool = True) -> PageResult:
    """The page's result as a worker sends it when archiving; its body
    gzip-encoded as a server would send it, or plain (`encoded=False`)."""
    body = gzip.compress(html, 6, mtime=0) if encoded else html
    encoding = "Content-Encoding: gzip\r\n" if encoded else ""
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{encoding}"
        f"Content-Length: {len(body)}\r\nServer: nginx\r\n\r\n"
    ).encode()
    exchange = Exchange(
        url=url, started=time.time(), ip="127.0.0.2", body=body, response_head=head,
        request_head=f"GET {url} HTTP/1.1\r\nHost: bench\r\n\r\n".encode(),
    )  # fmt: skip
    return PageResult(
        url=url, fp=fingerprint(url), final_url=url, status=200, fetched_at=time.time(),
        depth=1, data={"title": "t"}, exchanges=[exchange],
    )  # fmt: skip


def master_side(
    site: Site, work: Path, pages: int, batch: int, encoded: bool = True
) -> dict[str, Any]:
    """Archive.add alone, the master's added work per results message."""
    results = [result_of(url, html, encoded) for url, html in sample_pages(site, pages)]
    warc = WarcConfig(dir=str(work / "warc"))
    config = Config(warc=warc, master=MasterConfig(state_dir=str(work / "state")))
    archive = Archive(config, warc, StateHealth(str(work / "state")))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for start in range(0, len(results), batch):
        chunk = results[start : start + batch]
        archive.add(Results(node="n", lease="l", epoch=1, job="j", pages=chunk), chunk)
    archive.close()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    wire = sum(len(r.exchanges[0].body) for r in results)
    return {
        "pages": len(results),
        "batch": batch,
        "results_per_s": round(len(results) / wall),
        "cpu_us_per_page": round(cpu / len(results) * 1e6),
        "body_bytes_per_page": wire // len(results),
        "warc_bytes_per_page": size_of(work / "warc") // len(results),
    }


def gzip_levels(site: Site, pages: int) -> dict[str, Any]:
    """CPU and size of one gzip member per page at each level, for bodies
    sent plain (as these nginx runs send them) and gzip-encoded."""
    html = [page for _, page in sample_pages(site, pages)]
    out: dict[str, Any] = {}
    for sent, bodies in (("plain", html), ("gzip", [gzip.compress(h, 6) for h in html])):
        for level in (1, 6, 9):
            cpu0 = time.process_time()
            size = sum(len(zlib.compress(body, level)) for body in bodies)
            cpu = time.process_time() - cpu0
            out[f"{sent}_level_{level}"] = {
                "cpu_us_per_page": round(cpu / len(bodies) * 1e6),
                "bytes_per_page": size // len(bodies),
            }
    return out


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    plain = [r for r in runs if not r["warc"]]
    archived = [r for r in runs if r["warc"]]
    share = [
        (a["cpu_seconds"] - p["cpu_seconds"]) / a["cpu_seconds"]
        for p, a in zip(plain, archived, strict=True)
    ]
    return {
        "all_runs_correct": all(r["correct"] for r in runs),
        "median_pages_per_cpu_s": {
            "without": median([r["pages_per_cpu_s"] for r in plain]),
            "with_warc": median([r["pages_per_cpu_s"] for r in archived]),
        },
        "warc_share_of_cpu": [round(s, 3) for s in share],
        "median_warc_share_of_cpu": round(median(share), 3),
        "warc_bytes_per_page": median([r["warc_bytes"] / r["pages"] for r in archived]),
        "store_bytes_per_page": median([r["store_bytes"] / r["pages"] for r in archived]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", default="python,django", help=f"of {','.join(TREES)}")
    parser.add_argument("--port", type=int, default=18490, help="nginx port on every address")
    parser.add_argument("--pairs", type=int, default=2, help="rounds without and with --warc")
    parser.add_argument("--workers", type=int, default=2, help="nadird worker processes")
    parser.add_argument("--bags", type=int, default=16, help="bags per worker")
    parser.add_argument("--per-domain", type=int, default=2, help="requests in flight per host")
    parser.add_argument("--workdir", default=None, help="where the runs go (default: /tmp)")
    parser.add_argument("--master-pages", type=int, default=2000, help="pages for Archive.add")
    parser.add_argument("--levels", action="store_true", help="only the gzip levels' costs")
    parser.add_argument("--gzip-level", type=int, default=6, help="warc.gzip_level of the runs")
    args = parser.parse_args()
    site = site_of(args)
    if args.levels:
        print(json.dumps(gzip_levels(site, args.master_pages)))
        return 0
    header = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "nadird": __version__,
        "load_at_start": [round(x, 2) for x in os.getloadavg()],
        "args": vars(args),
    }
    print(json.dumps(header), flush=True)
    with (
        tempfile.TemporaryDirectory(prefix="bench-nginx-") as conf_dir,
        nginx(site, Path(conf_dir)) as server,
    ):
        expected, _ = expected_pages(site)
        runs = []
        for _ in range(args.pairs):
            for warc in (False, True):
                runs.append(crawl(args, site, server, expected, warc))
                print(json.dumps(runs[-1]), flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-warc-master-", dir=args.workdir) as work:
        master = master_side(site, Path(work), args.master_pages, 32)
    print(json.dumps({"master_archive_add": master}), flush=True)
    summary = summarize(runs)
    print(json.dumps({**summary, "load_at_end": [round(x, 2) for x in os.getloadavg()]}))
    return 0 if summary["all_runs_correct"] else 1


if __name__ == "__main__":
    sys.exit(main())
