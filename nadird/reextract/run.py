"""The pass over a job's stored pages: read a chunk, parse it, write it back.

Chunks follow the store's key order, so the key of a chunk's last page is
where the pass stands; it is saved with the chunk's updates (SQLite: in the
same transaction) together with the counts so far. A pass stopped by a
signal, or killed, goes on from there when run again, with its own `since`,
unless `restart` or the job's rules changed since (then the pages before
the checkpoint were extracted with other rules, and the pass starts over). A finished pass
removes its checkpoint. Nothing is fetched.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass, replace
from typing import Any

from nadird.common.logs import get_logger
from nadird.job.spec import Job
from nadird.reextract.core import Rules
from nadird.reextract.guard import WouldEmpty, sample
from nadird.reextract.near_dups import mark_near_duplicates
from nadird.reextract.pool import Extractors, Verdict
from nadird.reextract.tally import Progress, Tally
from nadird.store.stored import Checkpoint, PageStore, PageUpdate, StoredPage, UpdateOutcome

log = get_logger()
CHUNK_PAGES = 500  # pages per read and per write transaction


@dataclass(frozen=True)
class Options:
    since: float | None = None  # only pages fetched at or after this time
    restart: bool = False  # ignore a saved checkpoint
    processes: int = 1
    chunk: int = CHUNK_PAGES
    force: bool = False  # write even rules that would clear every item (guard.py)


@dataclass
class Pass:
    tally: Tally
    complete: bool
    resumed: bool
    seconds: float
    read_now: int  # pages read by this run (the tally may include an earlier one's)


class Chunks:
    """The store's chunks in order, the next one read ahead: the store's
    thread (SQLite, zlib) reads while the parser runs, on another core."""

    def __init__(self, store: PageStore, job: str, opts: Options) -> None:
        self._store = store
        self._job = job
        self._opts = opts
        self._ahead: tuple[str | None, asyncio.Task[list[StoredPage]]] | None = None

    def _read(self, after: str | None) -> asyncio.Task[list[StoredPage]]:
        opts = self._opts
        return asyncio.ensure_future(
            self._store.read_pages(self._job, after, opts.since, opts.chunk)
        )

    def prefetch(self, after: str) -> None:
        self._ahead = (after, self._read(after))

    async def next(self, after: str | None) -> list[StoredPage]:
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[0] == after:
            return await ahead[1]
        if ahead is not None:
            ahead[1].cancel()
        return await self._read(after)

    def cancel(self) -> None:
        if self._ahead is not None:
            self._ahead[1].cancel()
            self._ahead = None


def rules_digest(job: Job) -> str:
    """What the items depend on: a resumed pass must run the same rules."""
    wire = job.to_wire()
    relevant = {k: wire[k] for k in ("fields", "schema", "signature_ignore", "item_key")}
    relevant["revisits"] = job.revisits
    text = json.dumps(relevant, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _resume(saved: dict[str, Any] | None, digest: str, opts: Options) -> tuple[Resume, Options]:
    """Where a saved checkpoint lets this pass go on, and the options it goes
    on with: a resumed pass keeps its own --since (`6h ago` names another
    moment each time it is given)."""
    if saved is None:
        return Resume(None, Tally()), opts
    after, since = saved.get("after"), saved.get("since")
    usable = isinstance(after, str) and (since is None or isinstance(since, int | float))
    if saved.get("rules") != digest or not usable:
        log.info("reextract_checkpoint_ignored", why="the job's rules changed", after=after)
        return Resume(None, Tally()), opts
    if since != opts.since:
        log.info("reextract_keeps_since", since=since, given=opts.since)
    log.info("reextract_resumed", after=after)
    return Resume(after, Tally.from_dict(saved.get("counts"))), replace(opts, since=since)


@dataclass(frozen=True)
class Resume:
    after: str | None
    tally: Tally


async def reextract(
    store: PageStore,
    rules: Rules,
    opts: Options,
    stop: asyncio.Event,
    progress: Progress | None = None,
) -> Pass:
    """Re-extract the job's pages until done or `stop` is set (between chunks)."""
    started = time.monotonic()
    name, digest = rules.job.name, rules_digest(rules.job)
    saved = None if opts.restart else await store.load_checkpoint(name)
    resume, opts = _resume(saved, digest, opts)
    after, tally = resume.after, resume.tally
    resumed, before = after is not None, tally.read
    extractors = Extractors(rules, opts.processes)
    chunks = Chunks(store, name, opts)
    complete = False
    try:
        if not opts.force:
            await _look_first(store, name, extractors, after, opts)
        if progress is not None:
            progress.begin(before)
        while not stop.is_set():
            pages = await chunks.next(after)
            if pages:
                after = pages[-1].key
                chunks.prefetch(after)  # read the next chunk while this one is parsed
                updates = await _parse(pages, extractors, tally)
                state = {"after": after, "since": opts.since, "rules": digest}
                await store.update_page_data(updates, _checkpoint(name, state, tally, updates))
            if progress is not None:
                progress.show(tally)
            if len(pages) < opts.chunk:
                complete = True
                break
    finally:
        chunks.cancel()
        extractors.close()
    if complete:
        await store.update_page_data([], lambda _outcome: Checkpoint(name, None))
        # Only a finished pass has fingerprinted every page: the copies are
        # decided over all of them (near_dups.py).
        tally.near_duplicates = dict(await mark_near_duplicates(store, rules.job, opts.chunk))
    if progress is not None:
        progress.show(tally, final=True)
    return Pass(tally, complete, resumed, time.monotonic() - started, tally.read - before)


async def _look_first(
    store: PageStore, name: str, extractors: Extractors, after: str | None, opts: Options
) -> None:
    """Raise WouldEmpty before anything is written (guard.py)."""
    seen = await sample(store, name, extractors, after, opts.since, opts.chunk)
    if seen.empties:
        raise WouldEmpty(seen.had)


async def _parse(pages: list[StoredPage], extractors: Extractors, tally: Tally) -> list[PageUpdate]:
    todo = [p for p in pages if p.reason is None and p.record is not None]
    verdicts = await extractors.run([p.record for p in todo if p.record is not None])
    by_key: dict[str, Verdict] = {p.key: v for p, v in zip(todo, verdicts, strict=True)}
    updates = []
    for page in pages:
        update = tally.verdict(page, by_key.get(page.key))
        if update is not None:
            updates.append(update)
    return updates


def _checkpoint(name: str, state: dict[str, Any], tally: Tally, updates: list[PageUpdate]) -> Any:
    def made(outcome: UpdateOutcome) -> Checkpoint:
        tally.written(updates, outcome)
        return Checkpoint(name, {**state, "counts": tally.to_dict()})

    return made
