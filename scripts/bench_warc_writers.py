"""warcio against FastWARC, writing the same response records (one gzip member each).

500 pages of the Debian Python docs as response records, gzip level 6, CPU of
the best of 3 rounds; every file is read back by warcio with its digests
checked. Then warcio's time split: building the records, and zlib alone.
FastWARC is not a dependency: run this in a virtualenv holding both.

    python -m venv /tmp/fw && /tmp/fw/bin/pip install fastwarc warcio
    /tmp/fw/bin/python scripts/bench_warc_writers.py
"""

from __future__ import annotations

import io
import random
import time
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path

from fastwarc.stream_io import GzipWriter
from fastwarc.warc import WarcRecord, WarcRecordType
from warcio.archiveiterator import ArchiveIterator
from warcio.recordbuilder import RecordBuilder
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

ROOT = Path("/usr/share/doc/python3.11/html")
PAGES = [p.read_bytes() for p in random.Random(7).sample(sorted(ROOT.rglob("*.html")), 500)]
LEVEL = 6


def warcio_record(index: int, body: bytes) -> bytes:
    """One response record, uncompressed, as warcio writes it."""
    headers = [("Content-Type", "text/html"), ("Content-Length", str(len(body)))]
    http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
    record = RecordBuilder(warc_version="WARC/1.1").create_warc_record(
        f"http://h/{index}", "response", payload=io.BytesIO(body), length=len(body),
        http_headers=http,
    )  # fmt: skip
    buffer = io.BytesIO()
    WARCWriter(buffer, gzip=False).write_record(record)
    return buffer.getvalue()


def gzip_member(data: bytes) -> bytes:
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, zlib.MAX_WBITS + 16)
    return packer.compress(data) + packer.flush()


def with_warcio(path: Path) -> None:
    with open(path, "wb") as out:
        for index, body in enumerate(PAGES):
            out.write(gzip_member(warcio_record(index, body)))


def with_fastwarc(path: Path) -> None:
    with open(path, "wb") as out:
        for index, body in enumerate(PAGES):
            record = WarcRecord()
            record.init_headers(WarcRecordType.response, uuid.uuid4().urn[4:].encode())
            record.headers.append("WARC-Target-URI", f"http://h/{index}")
            record.headers.append("Content-Type", "application/http; msgtype=response")
            head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}"
            record.set_bytes_content(head.encode() + b"\r\n\r\n" + body)
            buffer = io.BytesIO()
            member = GzipWriter(buffer, compression_level=LEVEL)
            record.write(member, checksum_data=True)
            member.close()
            out.write(buffer.getvalue())


def checked(path: Path) -> int:
    """Records warcio reads back with every digest passing."""
    good = 0
    with open(path, "rb") as handle:
        for record in ArchiveIterator(handle, check_digests=True):
            record.content_stream().read()
            good += record.digest_checker.passed is not False
    return good


def best_cpu(write: Callable[[Path], None], path: Path) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        write(path)
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    for name, write in (("warcio", with_warcio), ("fastwarc", with_fastwarc)):
        path = Path(f"/tmp/bench-{name}.warc.gz")
        cpu = best_cpu(write, path)
        size = path.stat().st_size // len(PAGES)
        print(f"{name}: {cpu / len(PAGES) * 1e6:.0f} us/record, {size} bytes/record, "
              f"{checked(path)} of {len(PAGES)} records read back, digests passing")  # fmt: skip
    started = time.process_time()
    raw = [warcio_record(i, body) for i, body in enumerate(PAGES)]
    built = time.process_time() - started
    started = time.process_time()
    for data in raw:
        gzip_member(data)
    packed = time.process_time() - started
    print(f"warcio alone: building {built / len(PAGES) * 1e6:.0f} us/record, "
          f"zlib level {LEVEL} {packed / len(PAGES) * 1e6:.0f} us/record, "
          f"{sum(map(len, raw)) // len(raw)} bytes/record before gzip")  # fmt: skip


if __name__ == "__main__":
    main()
