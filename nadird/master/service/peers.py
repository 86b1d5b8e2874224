"""Whether a worker's connection to the control socket is still open.

A ROUTER forgets a peer's identity when its connection closes (a worker
killed, even with SIGKILL: its kernel closes the socket). In mandatory mode
it refuses to route to an identity it does not know (EHOSTUNREACH) instead
of dropping the message silently, which tells a closed connection from an
open one. Only the probe runs in that mode: other sends to a worker whose
queue is full must still drop rather than wait.
"""

from __future__ import annotations

import zmq

from nadird.protocol.codec import encode
from nadird.protocol.messages import Pong

# What the probe sends, if the worker is there: an answer to no heartbeat
# (their numbers start at 1), which a worker ignores.
PROBE = encode(Pong(seq=0))


class PeerProbe:
    """Ask a ROUTER whether it still routes to an identity."""

    def __init__(self, router: int) -> None:
        """`router`: the socket's address (`.underlying`); the probe sends on
        a plain (not asyncio) view of it, which returns at once."""
        self._router: zmq.Socket[bytes] = zmq.Socket.shadow(router)

    def connected(self, identity: bytes) -> bool:
        self._router.setsockopt(zmq.ROUTER_MANDATORY, 1)
        try:
            self._router.send_multipart([identity, PROBE], flags=zmq.DONTWAIT)
        except zmq.ZMQError as exc:
            # EAGAIN: its queue is full, so it is there.
            return exc.errno != zmq.EHOSTUNREACH
        finally:
            self._router.setsockopt(zmq.ROUTER_MANDATORY, 0)
        return True
