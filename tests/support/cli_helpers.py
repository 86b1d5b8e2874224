"""Running the real `nadird` command in a subprocess, as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def nadird(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`python -m nadird ARGS` with no stdin, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "nadird", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
    )
