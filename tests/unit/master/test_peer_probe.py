"""The master's probe of a worker's connection (a ROUTER and a DEALER in process)."""

from __future__ import annotations

from pathlib import Path

import zmq

from nadird.master.service.peers import PeerProbe
from nadird.testing.cluster import wait_until


def test_the_probe_tells_an_open_connection_from_a_closed_one(tmp_path: Path) -> None:
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    dealer = ctx.socket(zmq.DEALER)
    try:
        router.bind(f"ipc://{tmp_path}/control")
        dealer.connect(f"ipc://{tmp_path}/control")
        dealer.send(b"hello")
        assert router.poll(5000)
        identity, _ = router.recv_multipart()
        probe = PeerProbe(router.underlying)
        assert probe.connected(identity)
        assert not probe.connected(b"\0nobody")
        dealer.close(linger=0)  # as a worker killed with SIGKILL: its socket closes
        assert wait_until(lambda: not probe.connected(identity), 5)
        # The socket is back to dropping what it cannot route, silently.
        router.send_multipart([b"\0nobody", b"x"])
    finally:
        dealer.close(linger=0)
        router.close(linger=0)
        ctx.term()
