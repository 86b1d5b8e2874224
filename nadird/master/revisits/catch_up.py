"""At start, the watched values the store holds and the master does not.

A fetch's record reaches the store before its revisit row, with the new
values of the fields change alerts watch, is committed to frontier.db (the
row is written when the store confirms the record, and committed with the
master's next frontier commit). A master killed in between comes back with
the old values while the store, and its history, hold the new ones; the
change was never alerted, since its alert waits for the row, and the next
fetch would be compared with values older than the store's.

So before it takes any result, the master reads back from the store the
pages whose revisit was in the queue when it stopped (the only rows that can
be behind the store) and hands on what changed, as that fetch would have:
the alert goes out late but once, and the rows hold what the store holds.
"""

from __future__ import annotations

import asyncio
from typing import Any

from nadird.common.errors import StoreError
from nadird.common.logs import get_logger
from nadird.master.revisits.changes import FieldChange, watched_changes
from nadird.master.revisits.scheduler import Revisits
from nadird.master.state.revisit_db import Entry
from nadird.store.backend import ReadsByFingerprint, Store

log = get_logger()

CHECK_TIMEOUT = 10.0  # seconds the store may take (a store that is down does not hold the start)
PAGES_PER_READ = 500


async def catch_up(revisits: Revisits, store: Store) -> int:
    """Bring the revisit rows of watched pages level with the store; returns
    how many rows moved (their changes wait in `revisits.field_changes`).
    The caller commits the frontier."""
    watch = revisits.watch
    if not watch or not isinstance(store, ReadsByFingerprint):
        return 0
    entries = revisits.table.queued_watched(sorted(watch))
    if not entries:
        return 0
    try:
        fixed, found = await asyncio.wait_for(_compare(entries, watch, store), CHECK_TIMEOUT)
    except (StoreError, TimeoutError) as exc:
        log.warning("watched_values_not_checked", pages=len(entries), error=str(exc) or "timeout")
        return 0
    if store.spool_records:  # acknowledged records not in the store yet: it may be behind
        log.warning("watched_values_not_checked", pages=len(entries), error="store spool not empty")
        return 0
    revisits.table.set_watched(fixed)
    revisits.hand_on(found)
    log.info("watched_values_caught_up", checked=len(entries), pages=len(fixed), changes=len(found))
    return len(fixed)


async def _compare(
    entries: list[Entry], watch: dict[str, tuple[str, ...]], store: ReadsByFingerprint
) -> tuple[list[tuple[bytes, dict[str, Any]]], list[FieldChange]]:
    fixed: list[tuple[bytes, dict[str, Any]]] = []
    found: list[FieldChange] = []
    for start in range(0, len(entries), PAGES_PER_READ):
        part = entries[start : start + PAGES_PER_READ]
        stored = {r.fp: r for r in await store.records_of([e.fp for e in part])}
        for entry in part:
            record = stored.get(entry.fp)
            if record is None or record.job != entry.job:
                continue
            values, changed = watched_changes(
                entry.url, entry.job, watch[entry.job], entry.watched, record.status, record.data
            )
            if values is not None and values != entry.watched:
                fixed.append((entry.fp, values))
                found.extend(changed)
    return fixed, found
