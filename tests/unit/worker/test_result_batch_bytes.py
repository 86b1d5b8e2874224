"""The worker's result batches: sent early once their bodies are heavy (pages
carrying their exchanges for the archive hold a second copy of a compressed body)."""

from __future__ import annotations

import asyncio

import zmq
import zmq.asyncio

from nadird.common.urls import fingerprint
from nadird.protocol.codec import decode
from nadird.protocol.exchange import Exchange
from nadird.protocol.messages import PageResult, Results
from nadird.worker.service.sender import BATCH_BYTES, ResultSender

URL = "http://site.test/page"


def page(body: bytes, url: str) -> PageResult:
    exchange = Exchange(
        url=url, started=1.0, request_head=b"GET / HTTP/1.1\r\n\r\n",
        response_head=b"HTTP/1.1 200 OK\r\n\r\n", body=body,
    )  # fmt: skip
    return PageResult(
        url=url, fp=fingerprint(url), final_url=url, status=200, fetched_at=1.0, depth=0,
        exchanges=[exchange],
    )  # fmt: skip


async def test_a_worker_sends_a_batch_early_once_its_bodies_weigh_16_mib() -> None:
    context = zmq.asyncio.Context()
    push, pull = context.socket(zmq.PUSH), context.socket(zmq.PULL)
    pull.bind("inproc://results")
    push.connect("inproc://results")
    try:
        sender = ResultSender(push, "w1", batch=32, interval=60.0)
        heavy = b"z" * (BATCH_BYTES // 3 + 1)  # three such pages pass the mark
        for i in range(3):
            sender.add("lease", 1, "job", b"", page(heavy, f"{URL}/{i}"))
        message = decode(await asyncio.wait_for(pull.recv(), 5))
        assert isinstance(message, Results) and len(message.pages) == 3
        assert sender.sent_pages == 3  # not waiting for 32 pages or the timer
    finally:
        push.close(0)
        pull.close(0)
        context.term()
