"""Whether the master hands out new work: the store's health decides.

Kept apart from the server's loops because it holds its own state (which
warnings it has logged) and one rule: a store that cannot keep up, or a
state directory that cannot be written, gets no new work to store.
"""

from __future__ import annotations

from nadird.common.logs import get_logger
from nadird.master.observe.health import StateHealth
from nadird.master.results.writer import ResultWriter

log = get_logger()
BACKPRESSURE_RECHECK = 1.0  # seconds between looks at a full spool


class Backpressure:
    """Logs each change of the store's state once, when it happens."""

    def __init__(self, writer: ResultWriter, health: StateHealth) -> None:
        self.writer = writer
        self.health = health
        self._pressed = False
        self._behind = False

    def holds(self) -> bool:
        """The store's outage spool is over its cap, or the store is far behind
        the results (writer.behind): hand out no new work."""
        if self.writer.behind() != self._behind:
            self._behind = not self._behind
            if self._behind:
                log.warning("store_behind", pending=self.writer.pending)
            else:
                log.info("store_behind_over", pending=self.writer.pending)
        pressed = self.writer.store.backpressure
        if pressed != self._pressed:
            self._pressed = pressed
            if pressed:
                log.warning(
                    "store_backpressure",
                    reason="spool over store.spool_max_bytes",
                    spool_records=self.writer.store.spool_records,
                )
            else:
                log.info("store_backpressure_over")
        # A state file or the store that cannot be written: no new work
        # (StateHealth logs it and tries again).
        return pressed or self._behind or not self.health.healthy
