"""The master's archive: the records of every accepted page, written as results arrive.

The master writes the store, so it writes the archive too, from the exchanges
workers send (PageResult.exchanges); a page's records reach the file before
its record reaches the store writer. A write that fails (a full disk) is
reported to the state health (/healthz, `nadird_state_write_failures`: no
new bags are leased meanwhile) and the pages of that message go without
their records; the next message tries again.
"""

from __future__ import annotations

import os
import socket
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from nadird import __version__
from nadird.common.errors import ConfigError
from nadird.common.logs import get_logger
from nadird.config import Config, WarcConfig
from nadird.master.archive.copies import Capture, Copies
from nadird.master.archive.files import Recovered, WarcFiles, recover
from nadird.master.archive.records import PageRecords, Stored, own_record
from nadird.master.archive.trim import Trim
from nadird.master.leasing.acceptance import refusal
from nadird.master.leasing.leases import EndedLease, Lease
from nadird.master.observe.health import StateHealth
from nadird.protocol.messages import PageResult, Results

log = get_logger()
WARC = "warc"  # its name in StateHealth
# (row id, fingerprint) pairs -> the `via` of those rows that hold that fingerprint.
ViaOf = Callable[[Sequence[tuple[int, bytes]]], Mapping[int, str | None]]
_NONE: Mapping[bytes, str | None] = MappingProxyType({})


class Archive:
    def __init__(
        self,
        config: Config,
        warc: WarcConfig,
        health: StateHealth,
        source: str = "(config)",
        stats: Counter[str] | None = None,
        via_of: ViaOf | None = None,
    ) -> None:
        self.directory = _writable(Path(warc.dir), source)
        self.recovered: list[Recovered] = recover(self.directory)
        self._health = health
        self._builder = PageRecords()
        info = _info(config, warc)
        self._files = WarcFiles(self.directory, warc.prefix, warc.max_size, info, warc.gzip_level)
        self._copies = Copies(Path(config.master.state_dir))
        self.required = warc.required
        # The frontier's `via` of queued rows (FrontierDB.vias); none without.
        self._via_of: ViaOf = via_of or (lambda rows: {})
        # warc_records, warc_bytes, warc_revisits, warc_failures (/metrics).
        self.stats: Counter[str] = Counter() if stats is None else stats
        self._trim = Trim(self._copies, self.directory, self.stats)
        self._trim.look()  # files removed while the master was down

    @property
    def files(self) -> list[Path]:
        """The files this process finished."""
        return list(self._files.closed)

    def take(self, msg: Results, user: str, held: Lease | EndedLease | None) -> bool:
        """Archive results before they are stored, those of a live lease and
        the late ones of a lease that ended (real exchanges too); `held` is
        the lease the message names (Adoption.lease_named). False when they
        must not be stored (warc.required, and the archive cannot be
        written): the master drops the message, its URLs stay queued and are
        crawled again. Refused results are not archived (nor stored)."""
        if held is None or refusal(msg, user, held) is not None:
            return True
        # A live lease's pages answered already (sent again after a restart)
        # were archived then; the store skips them too.
        pages = [p for p in msg.pages if not isinstance(held, Lease) or p.fp in held.pending]
        return self.add(msg, pages, self._vias(pages, held)) or not self.required

    def _vias(self, pages: list[PageResult], held: Lease | EndedLease) -> dict[bytes, str | None]:
        """Each page's `via` from its queue row (by the lease's row id, or the
        one its worker echoed for a late result), by fingerprint; a page
        whose row is gone (stored by another worker) is left out."""
        pending = held.pending if isinstance(held, Lease) else {}
        ids: dict[int, bytes] = {}
        for page in pages:
            row = pending.get(page.fp)
            ids[row.id if row is not None else page.row] = page.fp
        ids.pop(0, None)
        found = self._via_of(list(ids.items())) if ids else {}
        return {ids[row_id]: via for row_id, via in found.items()}

    def add(
        self, msg: Results, pages: list[PageResult], vias: Mapping[bytes, str | None] = _NONE
    ) -> bool:
        """Archive the accepted `pages` of `msg` (`vias`: their queue rows'
        `via`, by fingerprint; a page without one is given its first, kept
        in archive.db); False when they could not be."""
        first = self._first_vias(pages, vias)
        records: list[Any] = []
        archived: dict[str, Stored] = {}
        owners: list[tuple[PageResult, int, bool]] = []  # page, its own record's index, rendered

        def lookup(uri: str) -> Stored | None:  # a copy earlier in this batch counts
            return archived.get(uri) or self._copies.get(uri)

        for page in pages:
            try:
                via = first.get(page.fp)
                built, copies = self._builder.page(page, msg.job, msg.node, lookup, via)
            except Exception as exc:  # warcio raises several kinds on a bad head
                self._bad_exchange(page, msg.node, exc)
                continue
            own = own_record(built)
            if own is not None:
                owners.append((page, len(records) + own[0], own[1]))
            records += built
            archived.update(copies)
        if not records:  # none of the pages was answered (network errors)
            self._copies.put({}, (), first)
            return True
        closed = len(self._files.closed)
        try:
            placed = self._files.append(records, self._builder.warcinfo)
        except OSError as exc:
            self.stats["warc_failures"] += 1
            self._health.failed(WARC, exc)
            return False
        self._health.ok(WARC)
        captures = [
            Capture(
                page.fp,
                page.fetched_at,
                placed.file,
                placed.offsets[index],
                records[index].rec_type == "revisit",
                rendered,
            )
            for page, index, rendered in owners
        ]
        self._copies.put(archived, captures, first)
        self.stats["warc_records"] += len(records)
        self.stats["warc_bytes"] += placed.written
        self.stats["warc_revisits"] += sum(1 for r in records if r.rec_type == "revisit")
        if len(self._files.closed) > closed:  # it reached max_size
            self._trim.look()
        return True

    def _first_vias(
        self, pages: list[PageResult], vias: Mapping[bytes, str | None]
    ) -> dict[bytes, str]:
        """Each page's first `via` (copies.py): the queue row's, kept as it
        is the first, or for a page whose row has none (fetched again) the
        one kept when it was first fetched."""
        first = {fp: via for fp, via in vias.items() if via}
        again = [page.fp for page in pages if page.fp not in first]
        return {**self._copies.first_vias(again), **first} if again else first

    def _bad_exchange(self, page: PageResult, node: str, exc: Exception) -> None:
        """A head no HTTP parser takes (a hostile or broken worker): the page
        goes on to the store without records; counted and logged."""
        self.stats["warc_bad_exchanges"] += 1
        log.warning(
            "warc_bad_exchange",
            url=page.url[:200],
            worker=node,
            error=f"{type(exc).__name__}: {exc}"[:200],
        )

    def captures(self, fp: bytes, limit: int) -> list[Capture]:
        """Where the page `fp` was archived, its latest `limit` fetches, newest first."""
        return self._copies.captures(fp, limit)

    def rotate(self) -> Path | None:
        """Close the current file (SIGHUP); the next record starts a new one."""
        try:
            closed = self._files.close()
        except OSError as exc:
            self._health.failed(WARC, exc)
            return None
        self._trim.look()
        return closed

    def trim(self) -> bool:
        """Drop captures of the files gone from the directory for a moment
        (trim.py; the master's housekeeping, once a tick); True while more remain."""
        return self._trim.run()

    def close(self) -> None:
        self.rotate()
        self._copies.close()


def _writable(directory: Path, source: str) -> Path:
    """The archive's directory, made if missing; a ConfigError (exit status 2)
    when it cannot be written, rather than a crawl that archives nothing."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(source, "warc.dir", f"a directory it can write ({exc})") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ConfigError(source, "warc.dir", f"a directory it can write ({directory})")
    return directory


def _info(config: Config, warc: WarcConfig) -> dict[str, str]:
    jobs = ", ".join(sorted(name for name in config.jobs if name != "default")) or "default"
    info = {
        "software": f"nadird/{__version__}",
        "format": "WARC File Format 1.1",
        "conformsTo": "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        "hostname": socket.gethostname(),
        "isPartOf": warc.prefix,
        "job": jobs,
    }
    if warc.description:
        info["description"] = warc.description
    return info
