"""A running master's watch on its replica's generation (master.replica).

The check at start keeps a revived old master from starting; it cannot see a
master that never stopped (cut off by a partition, or a hung host that comes
back) while another one is restored elsewhere and started on the same
replica. So while it runs, the master reads the replica's generation again
every master.replica_check_interval, the way it does at start: `litestream
restore` of replica.db alone (a few kilobytes; Litestream reads every
replica type, where reading its files directly would tie the master to one
storage and to Litestream's file format). A replica held by another master
(generation.supersedes) ends the watch with a call to `on_superseded`; one
that cannot be read is logged once per outage and read again at the next
interval.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from nadird.common.logs import get_logger
from nadird.master.service.replica_fetch import READ_ERRORS, replica_generation_off_loop
from nadird.master.state.generation import Generation, supersedes

log = get_logger()


class GenerationWatch:
    def __init__(
        self,
        binary: Callable[[], str | None],
        url: str,
        sftp_key: str | None,
        interval: float,
        on_superseded: Callable[[Generation], None],
    ) -> None:
        self._binary = binary
        self._url, self._sftp_key = url, sftp_key
        self.interval = interval
        self._on_superseded = on_superseded
        self.checks = 0  # reads of the replica that answered
        self._unread = False  # the last read failed (logged once per outage)

    async def run(self, own: Generation) -> None:
        """Read the replica every interval until it holds another master's generation."""
        while True:
            await asyncio.sleep(self.interval)
            replica = await self._read()
            if replica is not None and supersedes(replica, own):
                self._on_superseded(replica)
                return

    async def _read(self) -> Generation | None:
        try:
            found = await replica_generation_off_loop(self._binary(), self._url, self._sftp_key)
        except READ_ERRORS as exc:
            if not self._unread:
                log.warning("replica_generation_unread", url=self._url, error=str(exc)[:500])
            self._unread = True
            return None
        if self._unread:
            log.info("replica_generation_read_again", url=self._url)
        self._unread = False
        self.checks += 1
        return found
