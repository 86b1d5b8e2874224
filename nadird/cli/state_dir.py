"""Whether the master's state directory can be used, said before anything starts.

A directory the master cannot write (read-only, a path under a regular file,
`/proc/x`) used to end in a traceback and exit status 1, which a service
manager restarts forever; a ConfigError is one line naming the key and the
path, and exit status 2, which `RestartPreventExitStatus=2` stops.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from nadird.common.errors import ConfigError


def _refuse(source: str, key: str, path: str, why: str) -> ConfigError:
    return ConfigError(source, key, f"a writable directory, but {path}: {why}")


def prepare_state_dir(path: str, source: str, key: str = "master.state_dir") -> None:
    """Create `path` if missing and write a file in it, as the master will."""
    directory = Path(path)
    if directory.exists() and not directory.is_dir():
        raise _refuse(source, key, path, "not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        raise _refuse(source, key, path, exc.strerror or str(exc)) from None


def check_state_dir(path: str, source: str, key: str = "master.state_dir") -> None:
    """Like prepare_state_dir, but leaving nothing behind (for `nadird check`):
    the directory, or the nearest one above it that exists, must take a new
    directory."""
    directory = Path(path)
    existing = directory
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise _refuse(source, key, path, f"{existing} is not a directory")
    try:
        if existing == directory:
            with tempfile.TemporaryFile(dir=directory):
                pass
        else:
            os.rmdir(tempfile.mkdtemp(dir=existing))
    except OSError as exc:
        raise _refuse(source, key, path, exc.strerror or str(exc)) from None
