"""Waiting for an asyncio.Event with a timeout, in loops that are cancelled to stop.

`asyncio.wait_for(event.wait(), timeout)` is not used for this: on Python
3.11 it loses a cancellation that arrives in the same turn of the event loop
as the event is set (the inner wait has finished, so wait_for returns its
result instead of raising CancelledError). A `while True` loop around it then
goes on waiting and whatever cancelled it waits for ever: that is how a
master stopping while workers said goodbye could hang. `asyncio.timeout`
tells its own expiry from an outer cancellation and lets the latter through.
"""

from __future__ import annotations

import asyncio


async def wait_set(event: asyncio.Event, timeout: float | None) -> bool:
    """Until `event` is set (True) or `timeout` seconds have passed (False);
    a cancellation always raises CancelledError."""
    try:
        async with asyncio.timeout(timeout):
            await event.wait()
    except TimeoutError:
        return False
    return True
