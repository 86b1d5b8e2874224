"""A resolver for aiohttp clients that sends every host name to loopback."""

from __future__ import annotations

import socket

from aiohttp.abc import AbstractResolver, ResolveResult


class LoopbackResolver(AbstractResolver):
    """Resolves every name to one loopback address.

    Clients using it can fetch the graph's real URLs (http://site-3.test:PORT/)
    and send the right Host header by themselves; and no name, however wrong,
    can lead a test off this machine.
    """

    def __init__(self, address: str = "127.0.0.1") -> None:
        self.address = address

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        inet = socket.AF_INET6 if ":" in self.address else socket.AF_INET
        return [
            ResolveResult(
                hostname=host,
                host=self.address,
                port=port,
                family=inet,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None
