"""Child processes that end when their parent dies."""

from __future__ import annotations

import shutil


def ended_with_parent(command: list[str]) -> list[str]:
    """The command, ended by SIGTERM when the process that starts it dies
    (setpriv, util-linux).

    A parent killed outright (SIGKILL, the OOM killer) must not leave its
    children running: Litestream on a state directory that a new master (or
    a restore) is about to use, or the workers of a `nadird crawl` waiting
    for ever for a master that is gone. Not a preexec_fn calling prctl:
    Python code in the forked child of a process with threads is unsafe, and
    the master has SQLite connections open there. Without setpriv, the
    service manager's process group does it (systemd's KillMode=control-group).
    """
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", "--", *command] if setpriv else command
