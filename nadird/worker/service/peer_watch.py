"""Whether the worker's control socket holds a live connection to an
endpoint (ZeroMQ's socket monitor): a master whose socket took the
worker's connection is there, busy or still
starting (loading a restored state), not lost; a worker with several
masters does not leave it for that silence (worker/masters.py). Leaving it
then would cost a restart's worth of work: the Hello it already read would
register the worker, and the worker coming back later would look like a
new process, its bags leased again."""

from __future__ import annotations

import asyncio
import contextlib
import struct

import zmq
import zmq.asyncio

# Connected, not only past the handshake: a master loading its state takes
# the connection at once (ZeroMQ's own thread) and its handshake waits for
# its event loop (the allow-list is answered there).
_UP = zmq.EVENT_CONNECTED | zmq.EVENT_HANDSHAKE_SUCCEEDED
_DOWN = zmq.EVENT_DISCONNECTED | zmq.EVENT_CLOSED
_EVENTS = _UP | _DOWN


class PeerWatch:
    def __init__(self, sock: zmq.asyncio.Socket) -> None:
        self._sock = sock
        self._monitor = sock.get_monitor_socket(_EVENTS)
        self._monitor.setsockopt(zmq.LINGER, 0)
        self._up: set[str] = set()  # endpoints with a live connection
        self._task = asyncio.create_task(self._run(), name="monitor-control")

    def is_up(self) -> bool:
        """A live connection to the master in use: the socket is connected to
        that one only (ZeroMQ names a TCP endpoint by its resolved address,
        so the configured name would not match)."""
        return bool(self._up)

    def forget(self) -> None:
        """The worker left the master in use (a DISCONNECTED may never come)."""
        self._up.clear()

    async def _run(self) -> None:
        while True:
            frames = await self._monitor.recv_multipart()
            if len(frames) != 2 or len(frames[0]) != 6:
                continue
            event, _value = struct.unpack("=HI", frames[0])
            endpoint = frames[1].decode("utf-8", "replace")
            if event & _UP:
                self._up.add(endpoint)
            elif event & _DOWN:
                self._up.discard(endpoint)

    def stop(self) -> None:
        """Before the socket closes (a monitor left open keeps the context)."""
        self._task.cancel()
        with contextlib.suppress(zmq.ZMQError):
            self._sock.disable_monitor()
        self._monitor.close()
