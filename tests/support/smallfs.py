"""A small file system the tests can fill up: the disk-full cases, for real.

A tmpfs of a few MiB is mounted on a directory (this needs root, or
CAP_SYS_ADMIN); `fill` then writes a ballast file until the kernel answers
ENOSPC, and `free` deletes it. Whatever writes there afterwards gets the very
error a full disk gives.
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

BALLAST = ".ballast"
CHUNK = 64 * 1024


class MountRefused(RuntimeError):
    """This process may not mount a file system (not root, no CAP_SYS_ADMIN)."""


class SmallFS:
    def __init__(self, mountpoint: Path, size_bytes: int) -> None:
        self.mountpoint = mountpoint
        self.size_bytes = size_bytes
        self._mounted = False

    def __enter__(self) -> SmallFS:
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        options = f"size={self.size_bytes},mode=0700"
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(self.mountpoint)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise MountRefused(done.stderr.strip() or f"mount exited {done.returncode}")
        self._mounted = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._mounted:
            # Lazy: a process of the test may still hold a file open there.
            subprocess.run(["umount", "-l", str(self.mountpoint)], check=False)
            self._mounted = False

    @property
    def ballast(self) -> Path:
        return self.mountpoint / BALLAST

    def fill(self) -> int:
        """Write the ballast until the file system is full; returns its size.
        (A write that does not fit is written in part: the last one fails.)"""
        block = b"\0" * CHUNK
        written = 0
        fd = os.open(self.ballast, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            while True:
                try:
                    written += os.write(fd, block)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    return written
        finally:
            os.close(fd)

    def free_bytes(self) -> int:
        stat = os.statvfs(self.mountpoint)
        return stat.f_bavail * stat.f_frsize

    def free(self) -> None:
        self.ballast.unlink(missing_ok=True)
