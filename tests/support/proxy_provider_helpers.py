"""Proxy addresses, configs and the proxies' logs for the proxy provider tests."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from support.proxy import ForwardProxy, Socks5Proxy, run_proxy_in_thread


def dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def proxies(count: int) -> Iterator[list[ForwardProxy | Socks5Proxy]]:
    with ExitStack() as stack:
        yield [stack.enter_context(run_proxy_in_thread()) for _ in range(count)]


def address(proxy: ForwardProxy | Socks5Proxy) -> str:
    return f"127.0.0.1:{proxy.port}"


def carried(proxy: ForwardProxy | Socks5Proxy) -> list[str]:
    return [e.url for e in proxy.entries()]  # type: ignore[union-attr]
