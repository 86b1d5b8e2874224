"""Up to when the master has read every control message of its workers.

A worker is silent, a lease expired and a waiting lease unclaimed only if
no message saying otherwise was sent in time. A master that fell behind (a
stall on a loaded machine, a restart with Hellos and heartbeats queued up)
has such messages waiting unread on its socket: judged by the clock alone,
it took its workers for silent and gave their leases away, and the URLs
they had fetched were fetched again. So they are judged as of the last time
the control socket had nothing left to read (MasterCore.expire bounds how
far behind that may be).
"""

from __future__ import annotations

import zmq
import zmq.asyncio


class HeardClock:
    __slots__ = ("until",)

    def __init__(self, now: float) -> None:
        self.until = now  # monotonic: every control message sent before is read

    def check(self, socket: zmq.asyncio.Socket, now: float) -> None:
        """After a message is handled, or at a housekeeping tick: caught up
        when nothing more is waiting. (Reading EVENTS from pyzmq's asyncio
        socket schedules what it reveals: the waiting recv is not starved.)"""
        events = socket.get(zmq.EVENTS)
        if isinstance(events, int) and not events & zmq.POLLIN:
            self.until = now
