"""An SFTP server on loopback for the sftp:// replica test (asyncssh): a
fresh host key, one client key allowed, the files under `root` (chroot). It
runs on its own event loop in a daemon thread, so a master process's
Litestream and the test can both use it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncssh

START_TIMEOUT = 10.0


@dataclass
class SftpServer:
    root: Path  # what the server serves, as /
    client_key: Path  # the private key it lets in
    port: int = 0


@contextmanager
def sftp_server(workdir: Path) -> Iterator[SftpServer]:
    root, key = workdir / "sftp-root", workdir / "sftp-client-key"
    root.mkdir(parents=True)
    client = asyncssh.generate_private_key("ssh-ed25519")
    client.write_private_key(str(key))
    key.chmod(0o600)
    server = SftpServer(root, key)
    loop = asyncio.new_event_loop()
    ready, stop = threading.Event(), asyncio.Event()

    async def serve() -> None:
        listener = await asyncssh.listen(
            "127.0.0.1",
            0,
            server_host_keys=[asyncssh.generate_private_key("ssh-ed25519")],
            authorized_client_keys=asyncssh.import_authorized_keys(
                client.export_public_key().decode()
            ),
            sftp_factory=lambda chan: asyncssh.SFTPServer(chan, chroot=str(root).encode()),
        )
        server.port = listener.sockets[0].getsockname()[1]
        ready.set()
        await stop.wait()
        listener.close()
        await listener.wait_closed()

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(START_TIMEOUT), "the SFTP server did not start"
    try:
        yield server
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(START_TIMEOUT)
