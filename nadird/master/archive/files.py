"""WARC files that never break: written under a temporary name, renamed when closed.

A file is `<prefix>-<UTC time>-<serial>-<pid>.warc.gz`, one gzip member per
record (readers seek to any record), opened with a `warcinfo` record. While
it is written it is named `....warc.gz.open`; closing it (its size reached
`max_size`, a rotation, the master stopping) syncs it to disk and renames it,
so a `.warc.gz` file is always whole. A `.open` file left by a crash is
repaired at the next start (recover()): cut after its last whole record and
renamed, or, with no whole record at all, left as it is and reported.
"""

from __future__ import annotations

import contextlib
import io
import os
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import IO, Any

from warcio.warcwriter import WARCWriter

from nadird.common.logs import get_logger

log = get_logger()
SUFFIX = ".warc.gz"
OPEN_SUFFIX = SUFFIX + ".open"
READ_CHUNK = 1024 * 1024
# The default gzip level of each record (warc.gzip_level). warcio's own
# writer uses 9: on the Debian doc pages it cost 1.8x the CPU of 6 for 1.1 %
# smaller files; 1 cost a third of 6 for 25 % larger ones
# (scripts/bench_warc.py --levels, docs/BENCHMARKS.md).
GZIP_LEVEL = 6


@dataclass(frozen=True, slots=True)
class Recovered:
    """What recover() did with a file a crash left open."""

    path: Path  # where it is now
    records: int  # whole records kept
    cut: int  # bytes of an unfinished record cut off
    renamed: bool


@dataclass(frozen=True, slots=True)
class Placed:
    """Where a batch of records went: the file's name (as it is once closed),
    each record's offset in it (where its gzip member starts), the bytes written."""

    file: str
    offsets: list[int]
    written: int


class WarcFiles:
    """The archive's current file and its rotation."""

    def __init__(
        self,
        directory: Path,
        prefix: str,
        max_size: int,
        info: dict[str, str],
        level: int = GZIP_LEVEL,
    ) -> None:
        self.directory = directory
        self.prefix = prefix
        self.max_size = max_size
        self.info = info
        self.level = level
        self.closed: list[Path] = []  # files finished by this process
        self._file: IO[bytes] | None = None
        # Records are serialized by warcio, uncompressed, into this buffer,
        # then written as one gzip member each (see GZIP_LEVEL).
        self._buffer = io.BytesIO()
        self._writer = WARCWriter(self._buffer, gzip=False)
        self._temp: Path | None = None
        self._serial = 0

    @property
    def current(self) -> Path | None:
        return self._temp

    def write(self, records: Sequence[Any], warcinfo: Any) -> int:
        """Append `records` (all, or on an OSError none: the file is cut back);
        returns the bytes written. `warcinfo` makes the record a new file starts with."""
        return self.append(records, warcinfo).written

    def append(self, records: Sequence[Any], warcinfo: Any) -> Placed:
        """As write(), and where each record went (for the console's URL page)."""
        if not records:
            return Placed("", [], 0)
        if self._file is None:
            self._open(warcinfo)
        assert self._file is not None and self._temp is not None
        name = self._temp.name.removesuffix(".open")
        start = self._file.tell()
        members = [self._member(record) for record in records]
        offsets = list(accumulate((len(m) for m in members[:-1]), initial=start))
        try:
            self._write_all(b"".join(members))
        except OSError:
            self._cut_back(start)
            raise
        written = self._file.tell() - start
        if self._file.tell() >= self.max_size:
            self.close()
        return Placed(name, offsets, written)

    def _write_all(self, data: bytes) -> None:
        """Unbuffered (a failed write fails here, not at a later flush or
        seek), and a short write goes on until all is written or one fails."""
        assert self._file is not None
        view = memoryview(data)
        while view:
            view = view[self._file.write(view) or 0 :]

    def _member(self, record: Any) -> bytes:
        """One record as one gzip member."""
        self._buffer.seek(0)
        self._buffer.truncate()
        self._writer.write_record(record)
        packer = zlib.compressobj(self.level, zlib.DEFLATED, zlib.MAX_WBITS + 16)
        return packer.compress(self._buffer.getvalue()) + packer.flush()

    def file_name(self) -> str:
        """The name the next file gets (warcinfo names it in its WARC-Filename)."""
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
        return f"{self.prefix}-{stamp}-{self._serial + 1:05d}-{os.getpid()}{SUFFIX}"

    def _open(self, warcinfo: Any) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        name = self.file_name()
        self._serial += 1
        while (self.directory / name).exists() or (self.directory / (name + ".open")).exists():
            name = self.file_name()  # a name taken (same second, pid reused): never overwrite
            self._serial += 1
        self._temp = self.directory / (name + ".open")
        self._file = open(self._temp, "xb", buffering=0)  # noqa: SIM115 (closed in close())
        try:
            self._write_all(self._member(warcinfo(name, self.info)))
        except OSError:
            self._abandon()  # it holds no whole record: removed
            raise

    def _cut_back(self, start: int) -> None:
        """Drop a batch half written (a full disk): the file ends on a whole record."""
        assert self._file is not None
        try:
            self._file.seek(start)
            self._file.truncate()
        except OSError:
            log.exception("warc_cut_failed", file=str(self._temp))
            self._abandon()

    def _abandon(self) -> None:
        """Stop writing this file: completed as recover() would, removed when
        it holds no whole record, or (that failing too) left for the next
        start's recover()."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
        temp, self._file, self._temp = self._temp, None, None
        if temp is None:
            return
        try:
            done = _complete(temp)
        except OSError:
            log.exception("warc_left_open", file=str(temp), reason="could not complete it")
            return
        if done.renamed:
            self.closed.append(done.path)
        else:  # this process's own file, without one whole record: nothing to keep
            with contextlib.suppress(OSError):
                temp.unlink()

    def close(self) -> Path | None:
        """Finish the current file (synced, renamed); its final path, or None."""
        if self._file is None or self._temp is None:
            return None
        os.fsync(self._file.fileno())
        self._file.close()
        final = self._temp.with_name(self._temp.name.removesuffix(".open"))
        self._temp.rename(final)
        _sync_dir(self.directory)
        self._file = None
        self._temp = None
        self.closed.append(final)
        log.info("warc_closed", file=str(final), bytes=final.stat().st_size)
        return final


def recover(directory: Path) -> list[Recovered]:
    """Complete every `.open` file a crash left in `directory`."""
    found = []
    for temp in sorted(directory.glob("*" + OPEN_SUFFIX)) if directory.is_dir() else []:
        done = _complete(temp)
        if done.renamed:
            log.warning(
                "warc_recovered", file=str(done.path), records=done.records, cut_bytes=done.cut
            )
        else:
            log.warning("warc_left_open", file=str(temp), reason="no whole record in it")
        found.append(done)
    return found


def _complete(temp: Path) -> Recovered:
    """Cut a `.open` file after its last whole record and rename it; one
    without any whole record is left as it is."""
    records, end = _whole_records(temp)
    size = temp.stat().st_size
    if records == 0:
        return Recovered(temp, 0, 0, False)
    with open(temp, "r+b") as handle:
        handle.truncate(end)
        os.fsync(handle.fileno())
    final = temp.with_name(temp.name.removesuffix(".open"))
    temp.rename(final)
    _sync_dir(temp.parent)
    return Recovered(final, records, size - end, True)


def _whole_records(path: Path) -> tuple[int, int]:
    """(whole gzip members, the offset after the last one) of a file cut
    anywhere: one member is one record, and a member is whole when zlib
    reaches its end (its CRC and length checked)."""
    count = end = 0
    at = 0  # where `pending` begins in the file
    pending = b""
    member = zlib.decompressobj(wbits=31)
    with open(path, "rb") as handle:
        while pending or (pending := handle.read(READ_CHUNK)):
            try:
                member.decompress(pending)
            except zlib.error:
                break  # not gzip past the last whole member
            if not member.eof:
                at, pending = at + len(pending), b""
                continue
            rest = member.unused_data
            at += len(pending) - len(rest)
            end, count = at, count + 1
            pending, member = rest, zlib.decompressobj(wbits=31)
    return count, end


def _sync_dir(directory: Path) -> None:
    """The rename itself reaches the disk."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
