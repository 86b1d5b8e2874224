"""Up to when the master has read every control message of its workers.

A worker is silent, a lease expired and a waiting lease unclaimed only if
no message saying otherwise was sent in time. A master that fell behind (a
stall on a loaded machine, a restart with Hellos and heartbeats queued up)
has such messages waiting unread on its socket: judged by the clock alone,
it took its workers for silent and gave their leases away, and the URLs
they had fetched were fetched again. So they are judged as of the last
housekeeping tick that found the control socket with nothing left to read
(MasterCore.expire bounds how far behind that may be).

A tick that comes late found the process stalled (SIGSTOP, a starved
machine): ZeroMQ's own I/O thread stalled with it, so what the workers sent
meanwhile may still be in the kernel, not yet in the socket's queue, and an
empty queue proves nothing. Such a tick is not taken as caught up; the next
one, on time, is.
"""

from __future__ import annotations

import zmq
import zmq.asyncio

# A tick later than this many periods after the one before found a stall.
STALL_PERIODS = 2.0


class HeardClock:
    __slots__ = ("_last_tick", "until")

    def __init__(self, now: float) -> None:
        self.until = now  # monotonic: every control message sent before is read
        self._last_tick = now

    def tick(self, socket: zmq.asyncio.Socket, now: float, period: float) -> None:
        """At a housekeeping tick, `period` after the one before: caught up
        when on time and nothing is waiting. (Reading EVENTS from pyzmq's
        asyncio socket schedules what it reveals: the waiting recv is not
        starved.)"""
        on_time = now - self._last_tick <= STALL_PERIODS * period
        self._last_tick = now
        if not on_time:
            return
        events = socket.get(zmq.EVENTS)
        if isinstance(events, int) and not events & zmq.POLLIN:
            self.until = now
