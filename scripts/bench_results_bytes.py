"""Benchmark: a results message's bytes with the archive on, the body sent
once (protocol/bodies.py) against twice.

    python scripts/bench_results_bytes.py [--tree /usr/share/doc/python3.11-doc/html] [--pages 2000]

Reads up to --pages HTML files of a documentation tree (as a server sends
them: uncompressed, the case of the Debian doc sites in bench_warc.py) and,
per page, builds the result a worker sends when the bag asks for the
exchanges: once with the body beside its exchange (before) and once left
out as the exchange's bytes (now). Messages of 16 pages are encoded and
decoded as the worker and the master do (the master puts the bodies back);
prints the bytes per page on the wire and the encode + decode CPU per page.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from nadird.common.urls import fingerprint
from nadird.protocol.bodies import body_to_send, put_bodies_back
from nadird.protocol.codec import decode, encode
from nadird.protocol.exchange import Exchange
from nadird.protocol.messages import PageResult, Results

PER_MESSAGE = 16
ROUNDS = 5


def result(path: Path, body: bytes, once: bool) -> PageResult:
    url = f"http://docs.test/{path.name}"
    exchange = Exchange(
        url=url, started=1.8e9, request_head=b"GET / HTTP/1.1\r\nHost: docs.test\r\n\r\n",
        response_head=b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", body=body,
    )  # fmt: skip
    sent, in_exchange = body_to_send(body, [exchange]) if once else (body, False)
    return PageResult(
        url=url, fp=fingerprint(url), final_url=url, status=200, fetched_at=1.8e9, depth=1,
        body=sent, body_in_exchange=in_exchange, exchanges=[exchange],
    )  # fmt: skip


def measure(files: list[tuple[Path, bytes]], once: bool) -> dict[str, Any]:
    pages = [result(path, body, once) for path, body in files]
    batches = [pages[i : i + PER_MESSAGE] for i in range(0, len(pages), PER_MESSAGE)]
    wire = 0
    cpu: list[float] = []
    for _ in range(ROUNDS):
        began = time.process_time()
        wire = 0
        for batch in batches:
            frame = encode(Results(node="w1", lease="l", epoch=1, job="docs", pages=batch))
            msg = decode(frame)
            assert isinstance(msg, Results)
            put_bodies_back(msg)
            wire += len(frame)
        cpu.append(time.process_time() - began)
    return {
        "bytes_per_page": round(wire / len(pages)),
        "encode_decode_us_per_page": round(statistics.median(cpu) / len(pages) * 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", default="/usr/share/doc/python3.11-doc/html")
    parser.add_argument("--pages", type=int, default=2000)
    args = parser.parse_args()
    paths = sorted(Path(args.tree).rglob("*.html"))[: args.pages]
    files = [(path, path.read_bytes()) for path in paths]
    body_bytes = sum(len(body) for _, body in files) / len(files)
    print(json.dumps({
        "tree": args.tree, "pages": len(files), "body_bytes_per_page": round(body_bytes),
        "body_twice (before)": measure(files, once=False),
        "body_once (now)": measure(files, once=True),
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
