"""The Bloom filter of seen URL fingerprints, with atomic snapshots.

A URL is marked seen when it is admitted to the frontier, so no two workers can
ever be handed it. Snapshot files carry a header (magic, format version, sizing,
CRC) so a truncated or foreign file is refused instead of silently loaded.
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib
from collections.abc import Iterable
from pathlib import Path

from rbloom import Bloom

from nadird.common.errors import StateError

MAGIC = b"NADSEEN2"
# magic, expected, fp_rate, added, seq (last admission included), crc32(payload)
_HEADER = struct.Struct("<8sQdQQI")


def _fp_hash(fp: bytes) -> int:
    # rbloom wants a signed 128-bit integer; a fingerprint already is one.
    return int.from_bytes(fp, "little", signed=True)


class SeenSet:
    def __init__(self, expected: int, fp_rate: float) -> None:
        self.expected = expected
        self.fp_rate = fp_rate
        self.added = 0
        # The frontier's admission sequence number this set includes up to:
        # on restart, admissions after it are replayed from the frontier.
        self.seq = 0
        self._bloom = Bloom(expected, fp_rate, _fp_hash)

    def __contains__(self, fp: bytes) -> bool:
        return fp in self._bloom

    @property
    def size_bytes(self) -> int:
        return int(self._bloom.size_in_bits) // 8

    def absent(self, fps: Iterable[bytes]) -> list[bytes]:
        """The fingerprints not in the set (one call per page instead of one
        per link: the check is most of what the master does with a link)."""
        contains = self._bloom.__contains__
        return [fp for fp in fps if not contains(fp)]

    def mark(self, fp: bytes) -> None:
        """Add a fingerprint the caller has just found absent (one Bloom hash
        instead of add_new's two: admission checks membership first anyway)."""
        self._bloom.add(fp)
        self.added += 1

    def add_new(self, fps: Iterable[bytes]) -> list[bool]:
        """Add each fingerprint; True where it was not seen before."""
        bloom = self._bloom
        fresh: list[bool] = []
        for fp in fps:
            if fp in bloom:
                fresh.append(False)
            else:
                bloom.add(fp)
                fresh.append(True)
        self.added += sum(fresh)
        return fresh

    def to_bytes(self) -> bytes:
        payload: bytes = self._bloom.save_bytes()
        header = _HEADER.pack(
            MAGIC, self.expected, self.fp_rate, self.added, self.seq, zlib.crc32(payload)
        )
        return header + payload

    @classmethod
    def from_bytes(cls, data: bytes, source: str) -> SeenSet:
        if len(data) < _HEADER.size:
            raise StateError(f"{source}: truncated seen-set snapshot")
        magic, expected, fp_rate, added, seq, crc = _HEADER.unpack_from(data)
        payload = data[_HEADER.size :]
        if magic != MAGIC:
            raise StateError(f"{source}: not a nadird seen-set snapshot")
        if zlib.crc32(payload) != crc:
            raise StateError(f"{source}: corrupt seen-set snapshot (checksum mismatch)")
        seen = cls.__new__(cls)
        seen.expected, seen.fp_rate, seen.added, seen.seq = expected, fp_rate, added, seq
        try:
            seen._bloom = Bloom.load_bytes(payload, _fp_hash)
        except Exception as exc:
            raise StateError(f"{source}: unreadable seen-set snapshot: {exc}") from None
        return seen

    def snapshot(self, path: str | os.PathLike[str]) -> None:
        write_atomic(Path(path), self.to_bytes())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SeenSet:
        return cls.from_bytes(Path(path).read_bytes(), str(path))


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write temp, fsync, rename, fsync the directory: the old file survives any crash.

    A failed write (disk full) removes the temp file: left behind, it would
    hold the very space the next try needs. `mode` (e.g. 0o600 for secrets)
    is the file's from its creation on, whatever the umask or an older file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if mode is None else mode)
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                os.fchmod(fh.fileno(), mode)  # a temp file left with another mode
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
