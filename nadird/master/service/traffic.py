"""The master's traffic with its workers: the control and results sockets'
loops, each frame decoded and handed to the core, and what the core answers
sent back. `Master` (server.py) builds on it, as on MasterReads.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING

import zmq
import zmq.asyncio

from nadird.common.errors import ProtocolError
from nadird.master.leasing.dispatch import Outgoing
from nadird.master.leasing.leases import EndedLease, Lease
from nadird.protocol.bodies import put_bodies_back
from nadird.protocol.codec import decode, encode
from nadird.protocol.messages import Message, Results

if TYPE_CHECKING:
    from nadird.config import Config
    from nadird.master.archive.service import Archive
    from nadird.master.core import MasterCore
    from nadird.master.results.writer import ResultWriter
    from nadird.master.service.group_commit import GroupCommit
    from nadird.protocol.curve import MasterSecurity


class MasterTraffic:
    """The sockets' loops of the master; what they need of it, declared."""

    config: Config
    core: MasterCore
    security: MasterSecurity
    archive: Archive | None
    writer: ResultWriter
    commits: GroupCommit
    _wake: asyncio.Event
    _router: zmq.asyncio.Socket | None
    _pull: zmq.asyncio.Socket | None

    async def _send_all(self, out: Outgoing) -> None:
        assert self._router is not None
        for identity, msg in out:
            with contextlib.suppress(zmq.ZMQError):
                await self._router.send_multipart([identity, encode(msg)])

    async def _broadcast(self, msg: Message) -> None:
        if self._router is not None:
            await self._send_all([(n.identity, msg) for n in self.core.nodes.all()])

    def _drop(self, reason: str, peer: str) -> None:
        self.core.drop(reason, peer)

    async def _control_loop(self) -> None:
        assert self._router is not None
        while True:
            frames = await self._router.recv_multipart(copy=False)
            user = self._user(frames[-1])
            if user is None:
                self._drop("key no longer allowed", "control")
            elif len(frames) != 2:
                self._drop(f"expected 2 frames, got {len(frames)}", "control")
            else:
                await self._on_control_frame(frames[0].bytes, frames[1].buffer, user)
            # A ready socket's recv() completes without yielding to the event
            # loop; without this a flood on one socket starves the others.
            await asyncio.sleep(0)

    async def _on_control_frame(self, identity: bytes, payload: memoryview, user: str) -> None:
        try:
            msg = decode(payload)
        except ProtocolError as exc:
            self._drop(str(exc), identity.hex())
            return
        self._wake.set()  # a handler failure is the loop guard's to count
        await self._send_all(self.core.on_control(identity, msg, time.monotonic(), user))

    def _user(self, frame: zmq.Frame) -> str | None:
        """The CURVE key a frame was authenticated with ("" without CURVE);
        None when that key has since been revoked."""
        if not self.security.enabled:
            return ""
        user = str(frame.get("User-Id"))
        return user if self.security.permits(user) else None

    async def _results_loop(self) -> None:
        assert self._pull is not None
        while True:
            # Whole messages: a multipart one is one drop. Payloads are
            # decoded from ZeroMQ's buffer, not copied.
            frames = await self._pull.recv_multipart(copy=False)
            user = self._user(frames[-1])
            if user is None:
                self._drop("key no longer allowed", "results")
            elif len(frames) != 1:
                self._drop(f"expected 1 frame, got {len(frames)}", "results")
            else:
                self.commits.soon()
                self._on_results_frame(frames[0].buffer, user)
            await asyncio.sleep(0)

    def _on_results_frame(self, payload: memoryview, user: str) -> None:
        try:
            msg = decode(payload)
        except ProtocolError as exc:
            self._drop(str(exc), "results")
            return
        if not isinstance(msg, Results):
            self._drop(f"{msg.KIND} on the results socket", "results")
            return
        put_bodies_back(msg)  # before anything reads them
        self._wake.set()  # a handler failure is the loop guard's to count
        # Archived before stored; see Archive.take for what is not.
        if self.archive is not None and not self.archive.take(msg, user, self._lease_of(msg)):
            self._drop("archive not writable (warc.required)", msg.node)
            return
        self.writer.add(self.core.on_results(msg, time.monotonic(), user))

    def _lease_of(self, msg: Results) -> Lease | EndedLease | None:
        return self.core.adoption.lease_named(msg, time.monotonic(), self.config.master.late_window)
