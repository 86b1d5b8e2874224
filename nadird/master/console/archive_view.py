"""What the URL page shows of the web archive (warc:): where each of the
page's latest fetches was archived, as the master's archive.db remembers it
(master/archive/copies.py), the command that reads that record back, and
the `via` of its latest capture (the page whose link led to it), read from
that capture's metadata record."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from warcio.archiveiterator import ArchiveIterator

from nadird.master.archive.copies import Capture

if TYPE_CHECKING:
    from nadird.master.view.view import MasterView

SHOWN = 20  # latest captures listed
OPEN = ".open"  # the suffix of the file being written (archive/files.py)
# Records read after a capture's own one to find its metadata record: a
# page's records are written together (a rendered page's sub-requests
# come before its metadata), so it is near.
METADATA_WITHIN = 200


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
    via: str | None = None  # of the latest capture still on disk: a URL, "seed"

    def at(self, fetched_at: float) -> CaptureView | None:
        """The capture of the fetch that made a version (same fetch time)."""
        return next((c for c in self.captures if c.capture.at == fetched_at), None)


def archive_view(master: MasterView, fp: bytes) -> ArchiveView | None:
    """None when the master writes no archive."""
    found = master.captures(fp, SHOWN)
    if found is None:
        return None
    directory, captures = found
    views = [_located(Path(directory), c) for c in captures]
    latest = next((c for c in views if c.path is not None), None)
    via = None if latest is None else _via(latest)
    return ArchiveView(directory, views, via)


def _via(view: CaptureView) -> str | None:
    """The `via` of the metadata record that names this capture's record;
    None when not found or not known (a file cut or unreadable: the page
    shows without it)."""
    assert view.path is not None
    try:
        with open(view.path, "rb") as handle:
            handle.seek(view.capture.offset)
            records = ArchiveIterator(handle)
            own = next(records).rec_headers.get_header("WARC-Record-ID")
            for _, record in zip(range(METADATA_WITHIN), records, strict=False):
                names_own = record.rec_headers.get_header("WARC-Concurrent-To") == own
                if record.rec_type == "metadata" and names_own:
                    via = json.loads(record.content_stream().read()).get("via")
                    return via if isinstance(via, str) else None
    except Exception:  # warcio raises several kinds on a damaged file
        return None
    return None


def _located(directory: Path, capture: Capture) -> CaptureView:
    closed = directory / capture.file
    if closed.exists():
        return CaptureView(capture, str(closed), False)
    writing = directory / (capture.file + OPEN)
    if writing.exists():
        return CaptureView(capture, str(writing), True)
    return CaptureView(capture, None, False)  # moved or deleted since
