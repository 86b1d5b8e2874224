"""How long a stopping worker waits, and for what.

With its master there, a stop is graceful: the requests in flight end (up
to fetch.total_timeout), the bags are handed back, and the sockets get a
while (LINGER) to deliver the results and the Bye they queued. With its
master gone (killed, or cut off) nothing would read them: the bags are
cancelled and the sockets closed at once. Waiting would change nothing,
the queued results are in this process's memory only (ZeroMQ's queue), so
they end with it either way; the master re-leases the URLs they answered
when the leases expire, and they are fetched again.

Gone means the control connection is down (ZeroMQ's socket monitor sees
it at once when the master's process ends; service/peer_watch.py), or the master has been silent
for SILENT_BEATS heartbeats (a host cut off keeps a connection that looks
up). Closing ZeroMQ's context waits for that linger in a thread, so a
second signal still ends the process at once (cli/daemon.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

import zmq.asyncio

# Each socket's linger while the master is there: its results reach a
# master busy storing (the queue may hold up to SNDHWM messages).
RESULTS_LINGER_MS = 10_000
CONTROL_LINGER_MS = 2_000  # the Bye and a last BagDone
# Heartbeats the master may leave unanswered and still count as there
# (one is answered within milliseconds when it is), plus a second's slack.
SILENT_BEATS = 2.0
SLACK_S = 1.0
# The bags' tasks are cancelled when the master is gone: how long they
# get to unwind (their `finally` blocks only; no request is awaited).
CANCEL_WAIT_S = 1.0


def master_there(connected: bool, silent_s: float, heartbeat_interval: float) -> bool:
    """Whether anything would read what the worker still sends: the results
    connection is up and the master answered lately."""
    return connected and silent_s <= SILENT_BEATS * heartbeat_interval + SLACK_S


async def end_bags(tasks: list[asyncio.Task[None]], there: bool, drain_s: float) -> None:
    """Let the bags' requests in flight end (master there, at most
    `drain_s`), or cancel them (gone: no one would take their results)."""
    if not tasks:
        return
    if there:
        await asyncio.wait(tasks, timeout=drain_s)
        return
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks, timeout=CANCEL_WAIT_S)


def set_lingers(control: zmq.asyncio.Socket, results: zmq.asyncio.Socket) -> None:
    """At start, not only at close: a master left for the next one listed
    (masters.py) is disconnected with this linger, and the messages queued
    for it (Hellos it never read) would otherwise hold the close for ever."""
    control.setsockopt(zmq.LINGER, CONTROL_LINGER_MS)
    results.setsockopt(zmq.LINGER, RESULTS_LINGER_MS)


def close_sockets(control: zmq.asyncio.Socket, results: zmq.asyncio.Socket, there: bool) -> None:
    """Close, leaving what they queued the lingers set at start to go out
    (none with the master gone)."""
    control.close(linger=None if there else 0)
    results.close(linger=None if there else 0)


async def term_off_loop(ctx: zmq.asyncio.Context) -> None:
    """ctx.term() waits for the sockets' linger; in a thread of its own,
    the event loop still answers a second signal meanwhile. A daemon
    thread: an exit forced then does not wait for it."""
    loop = asyncio.get_running_loop()
    done = asyncio.Event()

    def term() -> None:
        ctx.term()
        with contextlib.suppress(RuntimeError):  # the loop ended first (a forced exit)
            loop.call_soon_threadsafe(done.set)

    threading.Thread(target=term, name="zmq-term", daemon=True).start()
    await done.wait()
