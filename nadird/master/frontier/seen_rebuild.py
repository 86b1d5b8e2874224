"""The seen set at start: the last snapshot plus the admissions logged after
it, or (`--rebuild-seen`) a new one from everything the crawl already knows.

Rebuilding is for when the snapshot is lost or damaged: every fingerprint in the store, the
queue, the dead letters and the overflow record is added again. Slow (it reads
the whole store) but exact: nothing the crawl has seen is fetched again.
"""

from __future__ import annotations

from pathlib import Path

from nadird.common.errors import StateError
from nadird.common.logs import get_logger
from nadird.config import Config
from nadird.master.frontier.seen import SeenSet
from nadird.master.state.files import FRONTIER_FILE, SEEN_FILE
from nadird.master.state.frontier_db import FrontierDB
from nadird.master.state.load_delay import slow_load
from nadird.store.backend import Store

log = get_logger()


def load_seen(config: Config, db: FrontierDB) -> SeenSet:
    """The last snapshot plus every admission logged after it."""
    slow_load()  # only where a test asks for it (load_delay.py)
    path = Path(config.master.state_dir) / SEEN_FILE
    if path.exists():
        try:
            seen = SeenSet.load(path)
        except StateError as exc:
            raise StateError(
                f"{exc}; refusing to start with an empty seen set. Start the master with "
                "--rebuild-seen to rebuild it from the store and the frontier"
            ) from None
    else:
        seen = SeenSet(config.bloom.expected_urls, config.bloom.fp_rate)
    replayed = seen.add_new(db.admitted_since(seen.seq))
    seen.seq = db.last_seq()
    log.info("seen_loaded", snapshot=path.exists(), added=seen.added, replayed=len(replayed))
    return seen


def snapshot_lost(config: Config) -> bool:
    """Whether seen.bloom is missing while the admission log was trimmed after
    one (`nadird restore` does not copy it; see master/state/replica_files.py):
    the log holds only what came after that snapshot, so an empty seen set
    would fetch again every URL admitted before it. The master then rebuilds
    the seen set at start. (Missing before any snapshot, the log is whole and
    replaying it is enough.)"""
    state = Path(config.master.state_dir)
    if (state / SEEN_FILE).exists() or not (state / FRONTIER_FILE).exists():
        return False
    db = FrontierDB(state / FRONTIER_FILE)
    try:
        lost = db.log_trimmed()
    finally:
        db.close()
    if lost:
        log.warning("seen_snapshot_missing", state_dir=str(state), action="rebuild")
    return lost


async def rebuild(config: Config, store: Store) -> SeenSet:
    state = Path(config.master.state_dir)
    seen = SeenSet(config.bloom.expected_urls, config.bloom.fp_rate)
    stored = 0
    async for record in store.iter_records():
        seen.add_new((record.fp,))
        stored += 1
    db = FrontierDB(state / FRONTIER_FILE)
    try:
        queued = len(seen.add_new(db.iter_fps()))
        seen.seq = db.last_seq()
    finally:
        db.close()
    seen.snapshot(state / SEEN_FILE)
    log.info("seen_rebuilt", stored=stored, frontier=queued, added=seen.added)
    return seen
