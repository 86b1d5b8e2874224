"""The master's control and results sockets, bound before its state loads.

A master restored with a large state (millions of URLs) takes a while to
read it or to rebuild its seen set. Bound first, its sockets take the
workers' connections at once (ZeroMQ's own thread does, while the state is
read), and a worker with several masters listed keeps to one that holds
its connection rather than giving it up as silent (worker/masters.py,
worker/service/peer_watch.py). Their Hellos wait in the socket: nothing is
read, answered or handed out before the state is loaded and the master's
loops start (server.py). A second master on the same addresses stops here,
before it opens any state file.
"""

from __future__ import annotations

import zmq
import zmq.asyncio

from nadird.common.errors import BindError
from nadird.config import Config
from nadird.master.service.handshakes import HandshakeWatch
from nadird.protocol.curve import MasterSecurity

# How long unsent messages may hold the context at close (ms).
LINGER_MS = 1000


class MasterSockets:
    """The context, CURVE security, and the two bound sockets (ROUTER for
    control, PULL for results); BindError when an address is taken."""

    def __init__(self, config: Config, security: MasterSecurity) -> None:
        master = config.master
        self.security = security
        self.ctx = zmq.asyncio.Context()
        self.security.start(self.ctx)
        self.router = self.ctx.socket(zmq.ROUTER)
        self.pull = self.ctx.socket(zmq.PULL)
        for sock in (self.router, self.pull):
            sock.setsockopt(zmq.LINGER, LINGER_MS)
            self.security.secure(sock)
        self.handshakes = HandshakeWatch()
        self._closed = False
        self.handshakes.watch(self.router, "control")
        self.handshakes.watch(self.pull, "results")
        try:
            bind(self.router, "master.bind", master.bind)
            bind(self.pull, "master.results_bind", master.results_bind)
        except BindError:
            self.close()
            raise

    def endpoints(self) -> tuple[str, str]:
        """(control, results) as bound (a port 0 resolved)."""
        return (
            self.router.getsockopt_string(zmq.LAST_ENDPOINT),
            self.pull.getsockopt_string(zmq.LAST_ENDPOINT),
        )

    def close(self) -> None:
        if self._closed:  # a failed start closes them on its way out too
            return
        self._closed = True
        self.handshakes.stop()
        self.router.close()
        self.pull.close()
        self.security.stop()
        self.ctx.term()


def bind(sock: zmq.asyncio.Socket, key: str, endpoint: str) -> None:
    try:
        sock.bind(endpoint)
    except zmq.ZMQError as exc:
        reason = zmq.strerror(exc.errno) if exc.errno else str(exc)
        raise BindError(endpoint, key, reason) from None
