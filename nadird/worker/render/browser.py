"""Launching headless Chromium so that it cannot reach the network by itself.

Every request the browser makes is intercepted (Playwright routing) and
answered by the worker's own fetcher, which applies the address policy, the
pinned names of fetch.resolve, robots.txt, pacing and size limits (see
subrequests.py). The flags below are a second wall for whatever could slip
past interception (preconnect, DNS prefetch, a request type Playwright does
not route, a bug):

* `--host-resolver-rules=MAP * ~NOTFOUND`: the browser resolves no name.
* `--proxy-server` pointing at a loopback port that is bound but never
  listened on, with `<-loopback>` so that loopback is proxied too: any
  connection the browser opens itself, IP literals included, is refused at
  once, on this machine.

Playwright does not tell the browser's process id, which a memory limit and
tests that kill the browser need: each launch passes a marker switch
(Chromium ignores switches it does not know) and the process is found by it
in /proc. Without /proc (not Linux) there is no pid and no memory check.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, Playwright

from nadird.config import RenderConfig

# Found to work as root on Debian's chromium; without the background-networking
# switches Chromium keeps trying to reach Google's services.
BASE_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-domain-reliability",
    "--dns-prefetch-disable",
    "--mute-audio",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-bypass-list=<-loopback>",
)
MARKER = "--nadird-renderer"
_PROC = Path("/proc")


@dataclass(eq=False)  # compared and hashed by identity: one per launch
class BrowserHandle:
    """One launched browser and what its restart policy needs to know."""

    browser: Browser
    pid: int | None
    generation: int
    # Held (bound, never listening) while the browser lives: its proxy port.
    dead_port: socket.socket
    pages: int = 0
    active: int = 0  # renders in progress on it
    crashed: bool = False
    retiring: bool = False  # no new render; closed when `active` drops to 0
    closing: bool = False
    memory_checked: float = field(default_factory=time.monotonic)

    def usable(self) -> bool:
        return not (self.crashed or self.retiring) and self.browser.is_connected()

    def kill(self) -> None:
        """Last resort when closing through Playwright failed."""
        if self.pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, 9)


def _dead_port() -> socket.socket:
    # Bound so no one else can take the port, never listened on so every
    # connection to it is refused: a proxy that lets nothing through.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


async def launch(playwright: Playwright, config: RenderConfig, generation: int) -> BrowserHandle:
    marker = uuid.uuid4().hex
    dead = _dead_port()
    port = dead.getsockname()[1]
    args = [
        *BASE_FLAGS,
        f"--proxy-server=http://127.0.0.1:{port}",
        f"{MARKER}={marker}",
        *config.args,
    ]
    try:
        browser = await playwright.chromium.launch(
            executable_path=config.executable,
            args=args,
            headless=True,
            timeout=config.launch_timeout * 1000,
            # Our own signal handling stops the worker; the browser must not
            # die first on a Ctrl-C meant for the whole process group.
            handle_sigint=False,
            handle_sigterm=False,
            handle_sighup=False,
        )
    except BaseException:
        dead.close()
        raise
    return BrowserHandle(browser, find_pid(marker), generation, dead)


def find_pid(marker: str) -> int | None:
    """The browser process (not a renderer or helper) launched with `marker`."""
    needle = f"{MARKER}={marker}".encode()
    if not _PROC.is_dir():
        return None
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        args = cmdline.split(b"\0")
        if needle in args and not any(a.startswith(b"--type=") for a in args):
            return int(entry.name)
    return None


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1:
            parents[int(entry.name)] = int(fields[1])
    return parents


def _process_kb(pid: int) -> int:
    """Proportional set size (shared pages divided among their users), else RSS."""
    try:
        for line in (_PROC / str(pid) / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    try:
        pages = int((_PROC / str(pid) / "statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def tree_memory_mb(pid: int) -> float:
    """Memory of a process and all its descendants (renderers, GPU, utilities)."""
    parents = _parents()
    tree = {pid}
    grew = True
    while grew:
        found = {child for child, parent in parents.items() if parent in tree} - tree
        tree |= found
        grew = bool(found)
    return sum(_process_kb(p) for p in tree) / 1024
