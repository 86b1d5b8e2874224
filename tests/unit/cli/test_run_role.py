"""A daemon whose role has stopped exits with its own status, even when a
SIGTERM or SIGINT comes during the rest of its exit (after the event loop
closed and gave them their default action back)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import os, signal, time
from nadird.cli.daemon import run_role

async def role() -> int:
    return 0

status = run_role(role())
os.kill(os.getpid(), signal.SIGTERM)
os.kill(os.getpid(), signal.SIGINT)
time.sleep(0.1)  # a signal's default action would have ended the process by now
print("exited by itself")
raise SystemExit(status)
"""


def test_a_stop_signal_after_the_role_stopped_changes_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "exited by itself"
