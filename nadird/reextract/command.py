"""`nadird reextract --job J`: the command around the pass (run.py).

Opens the store the config names (or `--store`), stops between chunks on
SIGINT or SIGTERM (exit status 130 / 143, the checkpoint saved), prints one
JSON summary line on stdout. Rules that would clear every item stop it
before it writes (guard.py), as a config error naming the job's fields.
"""

from __future__ import annotations

import asyncio
import json
import signal
from typing import TextIO

from nadird.common.errors import ConfigError, StoreError
from nadird.config import Config
from nadird.reextract.core import Rules
from nadird.reextract.guard import WouldEmpty
from nadird.reextract.run import Options, Pass, reextract
from nadird.reextract.tally import Progress
from nadird.store.open import open_store
from nadird.store.stored import PageStore
from nadird.store.uri import describe_store_uri

EXIT_OK = 0


class Stop:
    """The first SIGINT or SIGTERM asks the pass to stop after its chunk; a
    second one stops at once (the last chunk written is the checkpoint)."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.received: signal.Signals | None = None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._on, sig)

    def _on(self, sig: signal.Signals) -> None:
        self.received = sig
        self.event.set()
        loop = asyncio.get_running_loop()
        for each in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(each)  # the next one acts as it normally would


def summary(job: str, uri: str, done: Pass, stop: Stop) -> dict[str, object]:
    t = done.tally
    return {
        "event": "reextract_summary",
        "job": job,
        "store": describe_store_uri(uri),
        "complete": done.complete,
        "resumed": done.resumed,
        "read": t.read,
        "changed": t.changed,
        "became_valid": t.became_valid,
        "became_invalid": t.became_invalid,
        "unchanged": t.unchanged,
        "skipped": dict(sorted(t.skipped.items())),
        "versions": t.versions,
        "article_given_up": dict(sorted(t.article_given_up.items())),
        "near_duplicates": dict(sorted(t.near_duplicates.items())),
        "seconds": round(done.seconds, 3),
        "pages_per_s": round(done.read_now / done.seconds, 1) if done.seconds > 0 else 0.0,
        "signal": None if stop.received is None else stop.received.name,
    }


async def run(
    config: Config,
    job: str,
    uri: str,
    opts: Options,
    out: TextIO,
    progress: Progress,
    source: str = "(defaults)",
) -> int:
    store = open_store(uri, config.store)
    if not isinstance(store, PageStore):
        raise StoreError(f"{describe_store_uri(uri)}: this store cannot be re-extracted")
    rules = Rules.of(config.jobs[job], config.fetch.html_types)
    stop = Stop()
    stop.install()
    await store.open()
    try:
        done = await reextract(store, rules, opts, stop.event, progress)
    except WouldEmpty as exc:  # nothing written: the config is what to fix
        raise ConfigError(source, f"jobs.{job}.fields", str(exc)) from None
    finally:
        await store.close()
    print(json.dumps(summary(job, uri, done, stop)), file=out)
    if stop.received is not None and not done.complete:
        return 128 + int(stop.received)
    return EXIT_OK
