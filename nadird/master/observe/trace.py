"""The master's per-URL debug events: one URL's life, by url, lease and domain.

    url_admitted  a new URL entered the frontier (depth, job, referer)
    url_leased    it went out in a bag (lease, worker, attempt)
    url_returned  it came back unfetched (bag stopped, lease reclaimed)
    url_retried   a transient failure: tried again after `delay` seconds
    dead_letter   out of tries (a warning, logged whether or not debug is on)
    url_stored    its record is durable in the store (lease, worker, status)

The worker logs the fetch itself (`page_crawled`, see nadird/worker/page_log.py). Every
caller tests `gate.debug` once per message or bag before calling in here, so
with debug off the master builds no event for any URL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from nadird.common.logs import get_logger
from nadird.common.urls import domain_of
from nadird.master.row import Row
from nadird.store.base import PageRecord

log = get_logger()


class Lease(Protocol):
    """What a trace line names of a lease (leasing/leases.py has the lease;
    the stages that lease call in here, so this module names only what it reads)."""

    @property
    def id(self) -> str: ...
    @property
    def domain(self) -> str: ...
    @property
    def node(self) -> str: ...
    @property
    def pending(self) -> Mapping[bytes, Row]: ...


def admitted(rows: Iterable[Row], referer: str) -> None:
    for row in rows:
        log.debug(
            "url_admitted",
            url=row.url,
            domain=row.domain,
            job=row.job,
            depth=row.depth,
            referer=referer or None,
        )


def leased(lease: Lease) -> None:
    for row in lease.pending.values():
        log.debug(
            "url_leased",
            url=row.url,
            lease=lease.id,
            domain=lease.domain,
            worker=lease.node,
            attempt=row.attempts + 1,
        )


def returned(lease: Lease, rows: Iterable[Row], why: str) -> None:
    for row in rows:
        log.debug(
            "url_returned",
            url=row.url,
            lease=lease.id,
            domain=lease.domain,
            worker=lease.node,
            why=why,
        )


def retried(row: Row, lease: Lease | None, attempt: int, delay: float, error: str) -> None:
    log.debug(
        "url_retried",
        url=row.url,
        lease=lease.id if lease is not None else None,
        domain=row.domain,
        worker=lease.node if lease is not None else None,
        attempt=attempt,
        delay=round(delay, 3),
        error=error,
    )


def dead_letter(row: Row, lease: Lease | None, attempts: int, error: str) -> None:
    log.warning(
        "dead_letter",
        url=row.url,
        lease=lease.id if lease is not None else None,
        domain=row.domain,
        worker=lease.node if lease is not None else None,
        attempts=attempts,
        error=error,
    )


class StoreTrace:
    """Which lease each record came under, until the store makes it durable
    (records carry no lease). Filled only while debug is on."""

    def __init__(self) -> None:
        self._leases: dict[bytes, tuple[str, str]] = {}

    def results(self, records: Sequence[PageRecord], lease: str, domain: str | None) -> None:
        for record in records:
            self._leases[record.fp] = (lease, domain or domain_of(record.url))

    def durable(self, records: Sequence[PageRecord], debug: bool) -> None:
        if not self._leases:
            return
        for record in records:
            lease, domain = self._leases.pop(record.fp, (None, None))
            if debug:
                log.debug(
                    "url_stored",
                    url=record.url,
                    lease=lease,
                    domain=domain or domain_of(record.url),
                    worker=record.node,
                    status=record.status,
                    error=record.error,
                )
