"""Running the real `nadird` command in a subprocess, as a user would
(forked by the fork server: nadird/testing/forkserver.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from nadird.testing import forkserver


def nadird(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`python -m nadird ARGS` with no stdin, its output captured as text."""
    return forkserver.run([sys.executable, "-m", "nadird", *args], cwd, env, timeout)
