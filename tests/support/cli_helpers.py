"""Running the real `nadird` command in a subprocess, as a user would
(forked by the fork server: nadird/testing/forkserver.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from nadird.testing import forkserver


def nadird(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`python -m nadird ARGS` with no stdin, its output captured as text."""
    return forkserver.run(list(args), None if cwd is None else str(cwd), env, timeout)
