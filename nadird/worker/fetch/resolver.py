"""DNS for workers: pinned host names (--resolve), then the address policy."""

from __future__ import annotations

import fnmatch
import ipaddress
import socket

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver

from nadird.worker.fetch.addresses import AddressPolicy


class AddressBlocked(OSError):
    """Every address a host resolved to is refused by the address policy."""


class PolicyResolver(AbstractResolver):
    def __init__(self, pinned: dict[str, str], policy: AddressPolicy) -> None:
        # Exact names first; patterns like *.test after, in the order given.
        self._exact = {k.lower(): v for k, v in pinned.items() if "*" not in k}
        self._patterns = [(k.lower(), v) for k, v in pinned.items() if "*" in k]
        self._policy = policy
        self._fallback = DefaultResolver()

    def pinned(self, host: str) -> str | None:
        host = host.lower()
        if host in self._exact:
            return self._exact[host]
        for pattern, address in self._patterns:
            if fnmatch.fnmatchcase(host, pattern):
                return address
        return None

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        address = self.pinned(host)
        if address is not None:
            v6 = ":" in address
            results: list[ResolveResult] = [
                {
                    "hostname": host,
                    "host": address,
                    "port": port,
                    "family": socket.AF_INET6 if v6 else socket.AF_INET,
                    "proto": 0,
                    "flags": socket.AI_NUMERICHOST,
                }
            ]
        else:
            results = await self._fallback.resolve(host, port, family)
        allowed = [r for r in results if self._policy.permits(r["host"])]
        if not allowed:
            refused = ", ".join(sorted({r["host"] for r in results}))
            raise AddressBlocked(f"{host} resolves only to refused addresses ({refused})")
        return allowed

    async def check_host(self, host: str) -> None:
        """Raise AddressBlocked unless `host` resolves to a permitted address.

        For requests sent through a proxy, which resolves and connects by
        itself: the check cannot pin the address the proxy will use.
        """
        try:
            ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            await self.resolve(host)
            return
        if not self._policy.permits(host.strip("[]")):
            raise AddressBlocked(f"{host} is a refused address")

    async def close(self) -> None:
        await self._fallback.close()

    def __repr__(self) -> str:
        return f"PolicyResolver(pinned={len(self._exact) + len(self._patterns)})"
