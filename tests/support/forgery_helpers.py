"""A forger on the mesh (imported by test_forged_results.py): real ZeroMQ
sockets in the test process, one registered worker that never fetches
anything (it takes a bag and gives it back), and PUSH sockets that only send."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
import zmq.auth

from nadird.common.urls import fingerprint
from nadird.protocol.codec import decode, encode
from nadird.protocol.messages import (
    Bag,
    BagDone,
    Bye,
    Credit,
    Hello,
    Message,
    PageResult,
    Results,
    Welcome,
)
from nadird.testing.cluster import Cluster, wait_until

FORGED = "FORGED"  # in every forged page's data and checksum


def forged_page(url: str, fp: bytes | None = None, depth: int = 0) -> PageResult:
    return PageResult(
        url=url,
        fp=fingerprint(url) if fp is None else fp,
        final_url=url,
        status=200,
        fetched_at=time.time(),
        depth=depth,
        data={"title": FORGED},
        checksum=FORGED,
    )


@dataclass
class Keys:
    """CURVE keypairs (public, secret file) by name, and the master's public key."""

    pairs: dict[str, tuple[Path, Path]]

    def client(self, sock: zmq.Socket[bytes], name: str) -> None:
        public, secret = zmq.auth.load_certificate(str(self.pairs[name][1]))
        server, _ = zmq.auth.load_certificate(str(self.pairs["master"][0]))
        sock.curve_publickey = public
        sock.curve_secretkey = secret or b""
        sock.curve_serverkey = server


def local_member(cluster: Cluster) -> Keys:
    """The keys this host's workers share, made by the master at start: a
    forger holding them is a member of the mesh that lies."""
    where = cluster.local_keys
    assert wait_until((where / "worker.key_secret").exists, 30)
    names = ("master", "worker")
    return Keys({n: (where / f"{n}.key", where / f"{n}.key_secret") for n in names})


@dataclass
class Forger:
    """Registers on the control socket as `node` and pushes whatever it is told."""

    ctx: zmq.Context[zmq.Socket[bytes]]
    control: str
    results: str
    node: str = "mallory"
    keys: Keys | None = None
    key: str = ""  # the CURVE key it registers with (under CURVE)
    session: bytes = b""
    bag: Bag | None = None
    sent: int = 0  # Results messages pushed, each of which must be dropped
    _pushers: dict[str, zmq.Socket[bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.dealer = self.ctx.socket(zmq.DEALER)
        if self.keys is not None:
            self.keys.client(self.dealer, self.key)
        self.dealer.connect(self.control)

    def pusher(self, key: str = "") -> zmq.Socket[bytes]:
        """A PUSH socket with that CURVE key ("": without CURVE, or the forger's own)."""
        name = key or self.key
        if name not in self._pushers:
            sock = self.ctx.socket(zmq.PUSH)
            if self.keys is not None:
                self.keys.client(sock, name)
            sock.connect(self.results)
            self._pushers[name] = sock
        return self._pushers[name]

    def _send(self, msg: Message) -> None:
        self.dealer.send(encode(msg))

    def _recv(self, kind: type[Message], timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while self.dealer.poll(max(1, int((deadline - time.monotonic()) * 1000))):
            msg = decode(self.dealer.recv())
            if isinstance(msg, kind):
                return msg
            if time.monotonic() > deadline:
                break
        raise AssertionError(f"no {kind.KIND} from the master within {timeout}s")

    def take_a_bag(self) -> Bag:
        """Say hello, give one credit, wait for the bag the master leases."""
        self._send(Hello(node=self.node, capacity=1, pid=os.getpid()))
        self.session = self._recv(Welcome).session
        self._send(Credit(node=self.node, bags=1))
        self.bag = self._recv(Bag)
        return self.bag

    def give_back(self) -> None:
        """Return every URL of the bag unfetched, and leave."""
        assert self.bag is not None
        bag = self.bag
        self._send(BagDone(node=self.node, lease=bag.lease, epoch=bag.epoch, returned=bag.fps))
        self._send(Bye(node=self.node))

    def push(
        self,
        pages: list[PageResult],
        lease: str,
        epoch: int,
        node: str,
        session: bytes,
        key: str = "",
    ) -> None:
        msg = Results(
            node=node, lease=lease, epoch=epoch, job="default", pages=pages, session=session
        )
        self.pusher(key).send(encode(msg))
        self.sent += 1

    def close(self) -> None:
        for sock in [self.dealer, *self._pushers.values()]:
            sock.close(linger=1000)
