"""sd_notify: tell systemd (Type=notify) when we are ready, reloading, stopping.

A datagram to the socket named by NOTIFY_SOCKET; without that variable every
call does nothing, so the daemon runs the same under systemd and without it.
"""

from __future__ import annotations

import os
import socket


def notify(state: str) -> bool:
    """Send one state line (READY=1, RELOADING=1, STOPPING=1, WATCHDOG=1, STATUS=...)."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):
        address = "\0" + address[1:]  # abstract namespace
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.connect(address)
            sock.sendall(state.encode())
    except OSError:
        return False
    return True


def watchdog_interval() -> float | None:
    """Half the watchdog timeout systemd set (WATCHDOG_USEC), if it is meant for us."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 2_000_000
    except ValueError:
        return None
