"""Why a master that is there does not answer: a hint for master_unreachable.

A worker that gets no Welcome while the master's endpoint accepts
connections is, nearly always, refused during the ZeroMQ handshake: the
master requires CURVE keys and the worker has none, or the keys do not fit.
Neither side's code sees that (the master logs it from a socket monitor,
`curve_handshake_failed`); this probe lets the worker's log say where to look.
"""

from __future__ import annotations

import asyncio
import contextlib

PROBE_TIMEOUT = 2.0

NO_KEYS = (
    "the master accepts connections but does not answer: it may require CURVE"
    " keys (set security.worker_secret_key and security.master_public_key);"
    " the master logs curve_handshake_failed"
)
KEYS_MISMATCH = (
    "the master accepts connections but does not answer: the CURVE keys may not"
    " fit (security.master_public_key is not the master's, or this worker's"
    " public key is not on its allow-list); the master logs curve_handshake_failed"
)


async def accepts(endpoint: str) -> bool:
    """Whether something accepts a connection at a tcp:// or ipc:// endpoint."""
    scheme, _, rest = endpoint.partition("://")
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            if scheme == "tcp":
                host, _, port = rest.rpartition(":")
                _, writer = await asyncio.open_connection(host.strip("[]"), int(port))
            elif scheme == "ipc":
                _, writer = await asyncio.open_unix_connection(rest)
            else:
                return False
    except (OSError, TimeoutError, ValueError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def silence_hint(endpoint: str, curve: bool) -> str | None:
    """What to check when a master that accepts connections stays silent to
    this worker's registration (`curve`: the worker has keys); None when
    nothing accepts there (then the master is down or elsewhere)."""
    if not await accepts(endpoint):
        return None
    return KEYS_MISMATCH if curve else NO_KEYS
