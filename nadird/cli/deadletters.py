"""`nadird dead-letters list|retry|purge`: inspect and re-queue failed URLs.

Works on the master's frontier database directly (SQLite in WAL mode allows a
second process): `retry` only marks letters, and the running master (or the
next one to start) moves them back into the queue within a few seconds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

from nadird.common.errors import ConfigError
from nadird.master.state.files import FRONTIER_FILE
from nadird.master.state.frontier_db import FrontierDB


def run(
    action: str, state_dir: str, job: str | None, domain: str | None, out: TextIO = sys.stdout
) -> int:
    path = Path(state_dir) / FRONTIER_FILE
    if not path.exists():
        raise ConfigError(str(path), "(file)", "a frontier database (is --state-dir right?)")
    db = FrontierDB(path)
    try:
        letters = db.dead_letters(job=job, domain=domain)
        if action == "list":
            for letter in letters:
                out.write(
                    json.dumps(
                        {
                            "url": letter.url,
                            "job": letter.job,
                            "domain": letter.domain,
                            "depth": letter.depth,
                            "error": letter.error,
                            "attempts": letter.attempts,
                            "first_failed_at": letter.first_failed_at,
                            "last_failed_at": letter.last_failed_at,
                            "requeue": letter.requeue,
                        }
                    )
                    + "\n"
                )
            return 0
        fps = [letter.fp for letter in letters]
        count = db.mark_requeue(fps) if action == "retry" else db.purge_dead(fps)
        verb = "marked for retry" if action == "retry" else "purged"
        print(f"{count} dead letters {verb}", file=sys.stderr)
        return 0
    finally:
        db.close()
