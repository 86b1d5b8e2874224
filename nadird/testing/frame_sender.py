"""Sending hostile frames to a running master from outside, and reading what
it counted (tests and scripts/fuzz_protocol.py)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import zmq
from hypothesis import HealthCheck, given, settings

from nadird.testing.bad_frames import bad_messages, deep_frame, too_many_pages
from nadird.testing.cluster import Cluster, wait_until


class Api:
    """The master's management API, with the token from its state directory."""

    def __init__(self, cluster: Cluster) -> None:
        state = cluster.workdir / "state"
        assert wait_until(lambda: (state / "api.json").exists(), 30)
        self.url = json.loads((state / "api.json").read_text())["url"]
        self.token = (state / "api.token").read_text().strip()

    def get(self, path: str) -> tuple[int, bytes]:
        headers = {"Authorization": f"Bearer {self.token}"}
        request = urllib.request.Request(self.url + path, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def stats(self) -> dict[str, Any]:
        stats: dict[str, Any] = json.loads(self.get("/api/stats")[1])
        return stats


class Sender:
    """A DEALER on the control socket and a PUSH on the results socket."""

    def __init__(self, cluster: Cluster) -> None:
        self.ctx = zmq.Context()
        self.dealer, self.push = self.ctx.socket(zmq.DEALER), self.ctx.socket(zmq.PUSH)
        cluster.member(self.dealer, self.push)  # frames past the handshake, as a worker's
        self.dealer.connect(cluster.control)
        self.push.connect(cluster.results)
        self.sent = 0  # messages
        self.frames = 0

    def control(self, frames: list[bytes]) -> None:
        self.dealer.send_multipart(frames)
        self.sent += 1
        self.frames += len(frames)

    def results(self, frames: list[bytes]) -> None:
        self.push.send_multipart(frames)
        self.sent += 1
        self.frames += len(frames)

    def close(self) -> None:
        for sock in (self.dealer, self.push):
            sock.close(linger=1000)
        self.ctx.term()


def dose(sender: Sender, api: Api, rounds: int = 40) -> None:
    """Oversized and deep frames, ten rounds at a time, each counted before the
    next: the oversized results are built whole (~4 MB of objects each)
    before they are refused."""
    for start in range(0, rounds, 10):
        for _ in range(start, min(rounds, start + 10)):
            sender.results([too_many_pages(hidden=True)])
            sender.results([too_many_pages()])
            sender.control([deep_frame("hello", "node", 1000)])
            sender.results([deep_frame("results", "node", 1000)])
        if not counted(sender, api):
            raise AssertionError(f"the master did not count all {sender.sent} messages")


def counted(sender: Sender, api: Api, timeout: float = 60) -> bool:
    """Whether the master counts every message sent as dropped, within `timeout`."""
    return wait_until(lambda: api.stats()["dropped_messages"] == sender.sent, timeout)


def fuzz(sender: Sender, examples: int, live: str | None = None) -> None:
    """`examples` hypothesis examples, each one bad message to either socket;
    `live` names a running worker, for forgeries in its name."""

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(bad_messages(control=True, live=live), bad_messages(control=False, live=live))
    def send(control: list[bytes], results: list[bytes]) -> None:
        sender.control(control)
        sender.results(results)

    send()
