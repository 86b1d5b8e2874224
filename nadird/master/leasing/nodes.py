"""The worker registry: who is connected, what they can take, when last heard."""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field

from nadird.master.leasing.leases import Holder
from nadird.protocol.limits import SESSION_BYTES
from nadird.protocol.messages import Hello

# Offline workers stay listed (for the API) up to this many, oldest dropped.
OFFLINE_KEPT = 1000


@dataclass(slots=True)
class Node:
    node: str
    identity: bytes
    capacity: int
    group: str
    capabilities: list[str]
    pid: int
    last_seen: float
    host: str = ""
    credits: int = 0
    inflight: int = 0
    cpu_percent: float = 0.0
    rss_mb: float = 0.0
    proxies: int = 0  # usable proxies in its pool, as its last heartbeat said
    offline_since: float | None = None
    user: str = ""  # the CURVE key it authenticated with ("" without CURVE)
    # Random per registration, sent in the Welcome; its Results must carry it.
    session: bytes = b""
    leases: set[str] = field(default_factory=set)

    def can_run(self, group: str | None, requires: list[str]) -> bool:
        return (group is None or group == self.group) and set(requires) <= set(self.capabilities)

    def holder(self) -> Holder:
        return Holder(self.node, self.session, self.user)

    def restarted_as(self, hello: Hello, user: str, connected: bool) -> bool:
        """Whether `hello` comes from this worker restarted: the same key and
        host, and this registration's connection closed (a live process keeps
        it open, so a second worker of that name cannot push it out)."""
        return not connected and (self.user, self.host) == (user, hello.host)


class NodeRegistry:
    def __init__(self) -> None:
        self._by_identity: dict[bytes, Node] = {}
        self._by_name: dict[str, Node] = {}
        self._offline: OrderedDict[str, Node] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_name)

    def all(self) -> list[Node]:
        return list(self._by_name.values())

    def offline(self) -> list[Node]:
        return list(self._offline.values())

    def get(self, name: str) -> Node | None:
        return self._by_name.get(name)

    def register(
        self, identity: bytes, hello: Hello, now: float, user: str = ""
    ) -> tuple[Node, Node | None]:
        """Register a worker: its new entry, and the one it replaces (same name) if any."""
        previous = self._by_name.get(hello.node)
        if previous is not None:
            self._by_identity.pop(previous.identity, None)
        node = Node(
            node=hello.node,
            identity=identity,
            capacity=hello.capacity,
            group=hello.group,
            capabilities=list(hello.capabilities),
            pid=hello.pid,
            last_seen=now,
            host=hello.host,
            user=user,
            session=os.urandom(SESSION_BYTES),
        )
        self._by_identity[identity] = node
        self._by_name[hello.node] = node
        self._offline.pop(hello.node, None)
        return node, previous

    def by_identity(self, identity: bytes, now: float | None = None) -> Node | None:
        node = self._by_identity.get(identity)
        if node is not None and now is not None:
            node.last_seen = now
        return node

    def remove(self, node: Node, now: float | None = None) -> None:
        self._by_identity.pop(node.identity, None)
        if self._by_name.get(node.node) is node:
            del self._by_name[node.node]
        if now is not None:
            node.offline_since = now
            node.credits = 0
            self._offline[node.node] = node
            while len(self._offline) > OFFLINE_KEPT:
                self._offline.popitem(last=False)

    def silent(self, now: float, timeout: float) -> list[Node]:
        return [n for n in self._by_name.values() if now - n.last_seen > timeout]

    def with_credits(self) -> list[Node]:
        return [n for n in self._by_name.values() if n.credits > 0]


@dataclass(frozen=True)
class NodeLeases:
    """A worker (connected or gone) and how many bags it holds now."""

    node: Node
    bags: int

    @property
    def online(self) -> bool:
        return self.node.offline_since is None
