"""The worker registry: who is connected, what they can take, when last heard."""

from __future__ import annotations

from dataclasses import dataclass, field

from nadird.protocol.messages import Hello


@dataclass(slots=True)
class Node:
    node: str
    identity: bytes
    capacity: int
    group: str
    capabilities: list[str]
    pid: int
    last_seen: float
    credits: int = 0
    inflight: int = 0
    leases: set[str] = field(default_factory=set)


class NodeRegistry:
    def __init__(self) -> None:
        self._by_identity: dict[bytes, Node] = {}
        self._by_name: dict[str, Node] = {}

    def __len__(self) -> int:
        return len(self._by_name)

    def all(self) -> list[Node]:
        return list(self._by_name.values())

    def register(self, identity: bytes, hello: Hello, now: float) -> Node | None:
        """Register a worker; returns the node it replaces (same name), if any."""
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
        )
        self._by_identity[identity] = node
        self._by_name[hello.node] = node
        return previous

    def by_identity(self, identity: bytes, now: float | None = None) -> Node | None:
        node = self._by_identity.get(identity)
        if node is not None and now is not None:
            node.last_seen = now
        return node

    def remove(self, node: Node) -> None:
        self._by_identity.pop(node.identity, None)
        if self._by_name.get(node.node) is node:
            del self._by_name[node.node]

    def silent(self, now: float, timeout: float) -> list[Node]:
        return [n for n in self._by_name.values() if now - n.last_seen > timeout]

    def with_credits(self) -> list[Node]:
        return [n for n in self._by_name.values() if n.credits > 0]
