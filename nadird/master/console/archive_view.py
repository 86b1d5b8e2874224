"""What the URL page shows of the web archive (warc:): where each of the
page's latest fetches was archived, as the master's archive.db remembers it
(master/archive/copies.py), and the command that reads that record back."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nadird.master.archive.copies import Capture

if TYPE_CHECKING:
    from nadird.master.view.view import MasterView

SHOWN = 20  # latest captures listed
OPEN = ".open"  # the suffix of the file being written (archive/files.py)


@dataclass(frozen=True)
class CaptureView:
    capture: Capture
    path: str | None  # where the file is now (None: no longer in warc.dir)
    writing: bool  # still being written (its name ends in .open until closed)

    @property
    def command(self) -> str | None:
        """`warcio extract` for the record: the body of a response, the
        whole record (headers) of a revisit, which has no body."""
        if self.path is None:
            return None
        payload = [] if self.capture.revisit else ["--payload"]
        return shlex.join(["warcio", "extract", *payload, self.path, str(self.capture.offset)])


@dataclass(frozen=True)
class ArchiveView:
    directory: str
    captures: list[CaptureView]

    def at(self, fetched_at: float) -> CaptureView | None:
        """The capture of the fetch that made a version (same fetch time)."""
        return next((c for c in self.captures if c.capture.at == fetched_at), None)


def archive_view(master: MasterView, fp: bytes) -> ArchiveView | None:
    """None when the master writes no archive."""
    found = master.captures(fp, SHOWN)
    if found is None:
        return None
    directory, captures = found
    return ArchiveView(directory, [_located(Path(directory), c) for c in captures])


def _located(directory: Path, capture: Capture) -> CaptureView:
    closed = directory / capture.file
    if closed.exists():
        return CaptureView(capture, str(closed), False)
    writing = directory / (capture.file + OPEN)
    if writing.exists():
        return CaptureView(capture, str(writing), True)
    return CaptureView(capture, None, False)  # moved or deleted since
