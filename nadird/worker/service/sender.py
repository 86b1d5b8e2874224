"""Batches page results per lease onto the PUSH socket.

One message carries several pages of the same lease: flushed when the batch is
full, on a short timer, and always before the bag's BagDone is sent.
"""

from __future__ import annotations

import asyncio
import contextlib

import zmq.asyncio

from nadird.protocol.codec import encode
from nadird.protocol.messages import PageResult, Results

# A batch is sent early once its bodies reach this many bytes: pages that
# carry their exchanges for the archive (Bag.archive) hold a second copy of
# each body the server compressed (protocol/bodies.py), and a message must
# stay far below security.max_message_bytes.
BATCH_BYTES = 16 * 1024 * 1024


class ResultSender:
    def __init__(self, sock: zmq.asyncio.Socket, node: str, batch: int, interval: float) -> None:
        self._sock = sock
        self._node = node
        self._batch = batch
        self._interval = interval
        self._buffers: dict[str, tuple[int, str, bytes, list[PageResult]]] = {}
        self._bytes: dict[str, int] = {}  # body bytes buffered per lease
        self._task: asyncio.Task[None] | None = None
        self.sent_pages = 0

    def add(self, lease: str, epoch: int, job: str, session: bytes, page: PageResult) -> None:
        """Queue a page of a bag; `session` is the Welcome.session the bag came under."""
        entry = self._buffers.setdefault(lease, (epoch, job, session, []))
        entry[3].append(page)
        size = self._bytes.get(lease, 0) + _body_bytes(page)
        self._bytes[lease] = size
        if len(entry[3]) >= self._batch or size >= BATCH_BYTES:
            self._send(lease)

    def _send(self, lease: str) -> None:
        self._bytes.pop(lease, None)
        entry = self._buffers.pop(lease, None)
        if entry is None or not entry[3]:
            return
        epoch, job, session, pages = entry
        msg = Results(
            node=self._node, lease=lease, epoch=epoch, job=job, pages=pages, session=session
        )
        # PUSH queues up to its high-water mark without blocking; results are
        # never dropped here (a full queue blocks the send instead).
        self._sock.send(encode(msg))
        self.sent_pages += len(pages)

    def discard(self, lease: str) -> None:
        """Forget the pages of a lease not sent yet (the bag keeps them)."""
        self._buffers.pop(lease, None)
        self._bytes.pop(lease, None)

    def flush(self, lease: str | None = None) -> None:
        for key in [lease] if lease is not None else list(self._buffers):
            self._send(key)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="result-sender")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            self.flush()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.flush()


def _body_bytes(page: PageResult) -> int:
    """What a page weighs in a message, roughly: its bodies (the rest is small)."""
    return len(page.body or b"") + sum(len(e.body) for e in page.exchanges)
