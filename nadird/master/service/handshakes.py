"""Failed handshakes on the master's sockets, in the master's log.

A worker whose keys do not fit (none at all against a CURVE master, another
master's public key, a key not on the allow-list) never gets one message
through: ZeroMQ ends its connection during the handshake, below anything
the master's own code sees. A socket monitor does see it. Each failure is
logged as `curve_handshake_failed` with the endpoint and why, at most once
per socket and reason per interval with a count of the ones held back (a
refused worker with keys knocks again and again).

The line cannot name the worker: ZeroMQ's stable monitor events name the
bound endpoint only, and the connection is closed by the time the event is
read (the accept event's file descriptor is gone). The worker's own log
says it too (`master_unreachable` with a `hint`, see
worker/service/master_probe.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
import time

import zmq
import zmq.asyncio

from nadird.common.logs import PerKeyLimit, get_logger

log = get_logger()
LOG_INTERVAL = 10.0  # seconds between two lines of one socket and reason
# A peer that hangs up during the handshake: a keyless worker that saw the
# mismatch first does (its reset can reach the master before its greeting
# is read), but so does a port check: logged less often.
HANGUP_INTERVAL = 60.0
HANGUP = (
    "the peer closed the connection during the handshake (a worker without"
    " CURVE keys may, as does a port check)"
)
_EVENTS = (
    zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
    | zmq.EVENT_HANDSHAKE_FAILED_AUTH
    | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
)
# What a protocol error code means for an operator looking at a worker's keys.
_PROTOCOL_REASONS: dict[int, str] = {
    zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH: (
        "security mechanism mismatch: one side uses CURVE keys and the other"
        " none (a worker without security.worker_secret_key, or a master"
        " without security.master_secret_key)"
    ),
    zmq.PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC: (
        "cryptographic error: the worker's security.master_public_key is not"
        " this master's public key"
    ),
}


def reason_of(event: int, value: int) -> str:
    """Why a handshake failed, in words, from a monitor event and its value."""
    if event == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
        return f"refused by the allow-list (ZAP status {value}): the worker's key is not allowed"
    if event == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        return HANGUP
    return _PROTOCOL_REASONS.get(value, f"protocol error 0x{value:x}")


class HandshakeWatch:
    """Monitors sockets for failed handshakes and logs them, rate-limited."""

    def __init__(self, interval: float = LOG_INTERVAL) -> None:
        self._limit = PerKeyLimit(interval)
        self._hangups = PerKeyLimit(max(interval, HANGUP_INTERVAL))
        self._watched: list[tuple[zmq.asyncio.Socket, zmq.asyncio.Socket]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self.failures = 0

    def watch(self, sock: zmq.asyncio.Socket, name: str) -> None:
        monitor = sock.get_monitor_socket(_EVENTS)
        monitor.setsockopt(zmq.LINGER, 0)
        self._watched.append((sock, monitor))
        self._tasks.append(asyncio.create_task(self._run(monitor, name), name=f"monitor-{name}"))

    async def _run(self, monitor: zmq.asyncio.Socket, name: str) -> None:
        while True:
            frames = await monitor.recv_multipart()
            if len(frames) != 2 or len(frames[0]) != 6:
                continue
            event, value = struct.unpack("=HI", frames[0])
            if not event & _EVENTS:
                continue  # EVENT_MONITOR_STOPPED
            self.failures += 1
            reason = reason_of(event, value)
            limit = self._hangups if reason is HANGUP else self._limit
            suppressed = limit.allow(f"{name} {reason}", time.monotonic())
            if suppressed is not None:
                log.warning(
                    "curve_handshake_failed",
                    socket=name,
                    endpoint=frames[1].decode("utf-8", "replace"),
                    reason=reason,
                    suppressed=suppressed,
                )

    def stop(self) -> None:
        """Before the sockets close (a monitor left open keeps the context)."""
        for task in self._tasks:
            task.cancel()
        self._tasks.clear()
        for sock, monitor in self._watched:
            with contextlib.suppress(zmq.ZMQError):
                sock.disable_monitor()
            monitor.close()
        self._watched.clear()
