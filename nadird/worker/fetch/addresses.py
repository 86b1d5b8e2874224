"""Which network addresses a worker may connect to (the SSRF guard's policy).

Checked after DNS resolution, on every connection, redirects included: the
connector connects to exactly the addresses this policy let through, so there
is no second lookup between check and connect.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _unwrap(ip: IPAddress) -> IPAddress:
    # ::ffff:10.0.0.1 reaches 10.0.0.1; judge it as the IPv4 address it is.
    # 6to4 (2002:a00:1::) and NAT64 (64:ff9b::10.0.0.1) carry one too.
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip.sixtofour is not None:
            return ip.sixtofour
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def is_public(ip: IPAddress) -> bool:
    ip = _unwrap(ip)
    # is_global also refuses what is_private misses, e.g. 100.64.0.0/10 (CGNAT).
    return ip.is_global and not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local)
    )


class AddressPolicy:
    """Public addresses pass; others only if allowed (all, or by network)."""

    def __init__(self, allow_private: bool = False, allow: Iterable[str] = ()) -> None:
        self.allow_private = allow_private
        self.allow: list[Network] = [ipaddress.ip_network(n, strict=False) for n in allow]

    def permits(self, address: str) -> bool:
        try:
            ip = _unwrap(ipaddress.ip_address(address.split("%", 1)[0]))
        except ValueError:
            return False
        if self.allow_private or is_public(ip):
            return True
        return any(ip in net for net in self.allow)
