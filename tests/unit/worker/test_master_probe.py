"""The hint a worker logs when its master stays silent: only when something
accepts connections at the master's endpoint, worded for keys or none."""

from __future__ import annotations

import asyncio
import socket

from nadird.worker.service.master_probe import KEYS_MISMATCH, NO_KEYS, silence_hint


async def test_a_listening_but_silent_master_gets_a_hint_about_keys() -> None:
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        assert await silence_hint(f"tcp://127.0.0.1:{port}", curve=False) == NO_KEYS
        assert await silence_hint(f"tcp://127.0.0.1:{port}", curve=True) == KEYS_MISMATCH
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    assert await silence_hint(f"tcp://127.0.0.1:{dead}", curve=False) is None
    assert await silence_hint("ipc:///nonexistent/nadird-master", curve=False) is None
