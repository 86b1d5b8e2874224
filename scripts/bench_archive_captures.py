"""What the console's index of WARC captures costs (state/archive.db, the
`captures` table of master/archive/copies.py): bytes on disk per fetch
recorded, the time to record a batch as the archive writer does (one
transaction per results message), and the URL page's read of one page's
latest 20 captures, with `--pages` pages fetched `--fetches` times each;
then what dropping the captures of one file gone from the directory costs
(trim.py: the table scanned in PARTS steps) and finding none gone. And
the pages' first `via` (the `vias` table): bytes per page with a via of
VIA_CHARS characters, recorded with the first fetch's batch, and the read
of a batch's vias for a fetch again (a revisit).

    python scripts/bench_archive_captures.py --pages 100000 --fetches 5
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from pathlib import Path

from nadird.master.archive.copies import ARCHIVE_FILE, Capture, Copies
from nadird.master.archive.trim import PARTS

BATCH = 50  # pages per results message
VIA_CHARS = 80  # a page URL, as bench_frontier_via.py takes them


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--fetches", type=int, default=5)
    args = parser.parse_args()
    fps = [hashlib.blake2b(b"%d" % n, digest_size=16).digest() for n in range(args.pages)]
    with tempfile.TemporaryDirectory() as tmp:
        copies = Copies(Path(tmp))
        batches: list[float] = []
        for round_ in range(args.fetches):
            file = f"nadird-20261202{round_:06d}-{round_ + 1:05d}-4242.warc.gz"
            for start in range(0, args.pages, BATCH):
                captures = [
                    Capture(fp, 1.8e9 + round_ * 3600 + n, file, 1000 + n * 5000, round_ > 0, False)
                    for n, fp in enumerate(fps[start : start + BATCH])
                ]
                began = time.perf_counter()
                copies.put({}, captures)
                batches.append(time.perf_counter() - began)
        reads: list[float] = []
        for fp in fps[:: max(1, args.pages // 2000)]:
            began = time.perf_counter()
            found = copies.captures(fp, 20)
            reads.append(time.perf_counter() - began)
            assert len(found) == args.fetches
        size = sum(p.stat().st_size for p in Path(tmp).glob(ARCHIVE_FILE + "*"))
        began = time.perf_counter()
        assert copies.gone(lambda name: True) == {}
        none_gone = time.perf_counter() - began
        gone = copies.gone(lambda name: not name.startswith("nadird-20261202000000"))
        steps: list[float] = []
        dropped = 0
        for part in range(PARTS):  # as the master's housekeeping does, a part a tick
            began = time.perf_counter()
            dropped += copies.drop_part(gone, part)
            steps.append(time.perf_counter() - began)
        copies.forget_files(gone)
        copies.close()
    rows = args.pages * args.fetches
    print(f"rows (fetches recorded): {rows:,}")
    print(f"archive.db: {size / 1e6:.1f} MB, {size / rows:.0f} bytes per fetch")
    print(f"batch of {BATCH}: median {statistics.median(batches) * 1e3:.2f} ms")
    print(
        f"one page's latest 20: median {statistics.median(reads) * 1e6:.0f} us,"
        f" p99 {statistics.quantiles(reads, n=100)[98] * 1e6:.0f} us"
    )
    print(f"no file gone: {none_gone * 1e3:.2f} ms")
    print(
        f"one file gone ({dropped:,} rows dropped in {PARTS} steps):"
        f" {sum(steps) * 1e3:.0f} ms in all, a step {statistics.median(steps) * 1e3:.2f} ms"
        f" median, {max(steps) * 1e3:.2f} ms at most"
    )
    vias_cost(fps)


def vias_cost(fps: list[bytes]) -> None:
    """The `vias` table alone: written with the first fetches, read for the next."""
    with tempfile.TemporaryDirectory() as tmp:
        copies = Copies(Path(tmp))
        empty = sum(p.stat().st_size for p in Path(tmp).glob(ARCHIVE_FILE + "*"))
        writes: list[float] = []
        for start in range(0, len(fps), BATCH):
            batch = fps[start : start + BATCH]
            vias = {
                fp: f"https://site.example/{fp.hex()}"[:VIA_CHARS].ljust(VIA_CHARS, "x")
                for fp in batch
            }
            began = time.perf_counter()
            copies.put({}, (), vias)
            writes.append(time.perf_counter() - began)
        reads: list[float] = []
        for start in range(0, len(fps), BATCH):
            began = time.perf_counter()
            found = copies.first_vias(fps[start : start + BATCH])
            reads.append(time.perf_counter() - began)
            assert len(found) == len(fps[start : start + BATCH])
        copies.close()  # its last connection: the WAL goes into the file
        size = sum(p.stat().st_size for p in Path(tmp).glob(ARCHIVE_FILE + "*")) - empty
    print(f"vias: {size / len(fps):.0f} bytes per page (a via of {VIA_CHARS} characters)")
    print(f"vias, a batch of {BATCH} written: median {statistics.median(writes) * 1e3:.2f} ms")
    print(f"vias, a batch of {BATCH} read again: median {statistics.median(reads) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
