"""The last look before a request leaves: may this lane still send?

A bag's lane checks its lease before each request (bag.py, BagRun.unfenced),
but the request leaves later: after robots.txt, a wait for a pooled
connection, a connect. A process stopped in between (SIGSTOP, a paused VM, a
swapping host) and resumed after its lease went to another worker would
send it anyway, next to that worker's requests. So the lane names its check
here (`guard`) and the fetch session asks it again in the trace hook
`on_request_headers_sent`, which aiohttp awaits just before the request's
bytes are written; nothing in between yields to the event loop. The check
judges by the clock, so a stop anywhere before it shows as time gone by:
the check fails, SendRefused is raised and nothing is sent. Only a stop in
the few statements between the hook and the socket write stays unseen.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

import aiohttp


class SendRefused(Exception):
    """The lane's check failed at the last moment: the request was not sent.
    Not a fetch failure: the lane takes the URL back (bag.py)."""


# Whether this task's requests must not leave now (True: refuse). A task-local:
# each lane sets its bag's, and the tasks it starts inherit it.
_refuse: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar(
    "send_gate", default=None
)


def guard(refuse: Callable[[], bool] | None) -> None:
    """Check `refuse` before every request this task (and the tasks it
    starts from now on) sends."""
    _refuse.set(refuse)


def check() -> None:
    """Raise SendRefused if this task's check says no."""
    refuse = _refuse.get()
    if refuse is not None and refuse():
        raise SendRefused("the lease may be another worker's by now")


async def _before_write(_session: aiohttp.ClientSession, _context: Any, _params: Any) -> None:
    check()


def send_gate_trace() -> aiohttp.TraceConfig:
    """A trace for the fetch session: the lane's check, just before the write."""
    trace = aiohttp.TraceConfig()
    trace.on_request_headers_sent.append(_before_write)
    return trace
