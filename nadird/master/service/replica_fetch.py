"""Databases fetched back from a replica with `litestream restore`: all of
them by `nadird restore`, replica.db alone by a starting master that reads
the replica's generation (master/state/generation.py)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import yaml

from nadird.common.errors import StateError
from nadird.config.replica import replica_of
from nadird.master.state.generation import Generation, read_generation
from nadird.master.state.replica_files import MANIFEST_FILE, replica_entry

RESTORE_TIMEOUT = 3600.0  # one database, from a slow remote replica
PEEK_TIMEOUT = 60.0  # replica.db alone, a few kilobytes


def clear_db(directory: Path, name: str) -> None:
    """The old copy of a database (and its WAL, its Litestream state)."""
    for suffix in ("", "-wal", "-shm"):
        (directory / f"{name}{suffix}").unlink(missing_ok=True)
    shutil.rmtree(directory / f".{name}-litestream", ignore_errors=True)


@contextlib.contextmanager
def replica_args(url: str, name: str, sftp_key: str | None) -> Iterator[list[str]]:
    """How `litestream restore` and `litestream ltx` are told which replica:
    its URL, or (an sftp:// replica's key goes in a config file only) a
    config file naming it for a database path, which Litestream then uses
    as the key to its entry."""
    if sftp_key is None:
        yield [replica_of(url, name)]
        return
    with tempfile.TemporaryDirectory(prefix="nadird-litestream-") as scratch:
        config = Path(scratch) / "litestream.yml"
        db_path = str(Path(scratch) / name)
        entry = {"path": db_path, "replica": replica_entry(url, name, sftp_key)}
        config.write_text(yaml.safe_dump({"dbs": [entry]}), encoding="utf-8")
        yield ["-config", str(config), db_path]


def restore_db(
    binary: str,
    url: str,
    directory: Path,
    name: str,
    required: bool,
    timeout: float = RESTORE_TIMEOUT,
    sftp_key: str | None = None,
) -> bool:
    """Fetch database `name` of the replica at `url` into `directory`;
    False when the replica has none of it and it is not `required`."""
    clear_db(directory, name)
    command = [binary, "restore", "-no-expand-env", "-o", str(directory / name)]
    if not required:
        command.append("-if-replica-exists")
    with replica_args(url, name, sftp_key) as source:
        done = subprocess.run(
            [*command, *source],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise StateError(f"litestream restore of {name} from {url} failed: {' / '.join(tail)}")
    return (directory / name).exists()


def replica_generation(binary: str, url: str, sftp_key: str | None = None) -> Generation:
    """The generation the replica holds (Generation(0) for a new replica)."""
    with tempfile.TemporaryDirectory(prefix="nadird-replica-") as scratch:
        directory = Path(scratch)
        if not restore_db(binary, url, directory, MANIFEST_FILE, False, PEEK_TIMEOUT, sftp_key):
            return Generation(0)
        return read_generation(directory / MANIFEST_FILE)


# What reading a replica may raise: Litestream missing or failing, the
# replica unreachable or unreadable.
READ_ERRORS = (StateError, OSError, subprocess.SubprocessError)


async def replica_generation_off_loop(
    binary: str | None, url: str, sftp_key: str | None
) -> Generation:
    """replica_generation in a thread (it runs `litestream restore`), for the
    master's event loop; raises READ_ERRORS (a missing binary as StateError)."""
    if binary is None:
        raise StateError("litestream not found")
    return await asyncio.to_thread(replica_generation, binary, url, sftp_key)
