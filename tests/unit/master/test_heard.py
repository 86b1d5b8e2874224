"""HeardClock on a real ZeroMQ socket pair: caught up only at an on-time
tick that finds the control socket with nothing left to read."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import zmq
import zmq.asyncio

from nadird.master.service.heard import STALL_PERIODS, HeardClock

PERIOD = 0.5


@pytest.fixture
def pair() -> Iterator[tuple[zmq.asyncio.Socket, zmq.Socket[bytes]]]:
    ctx = zmq.asyncio.Context()
    router = ctx.socket(zmq.ROUTER)
    router.bind("inproc://heard")
    dealer = zmq.Context.shadow(ctx.underlying).socket(zmq.DEALER)
    dealer.connect("inproc://heard")
    yield router, dealer
    dealer.close(0)
    router.close(0)
    ctx.term()


def test_an_on_time_tick_with_nothing_waiting_is_caught_up(
    pair: tuple[zmq.asyncio.Socket, zmq.Socket[bytes]],
) -> None:
    router, _dealer = pair
    clock = HeardClock(0.0)
    clock.tick(router, PERIOD, PERIOD)
    assert clock.until == PERIOD


def test_a_message_waiting_unread_keeps_the_judgement_back(
    pair: tuple[zmq.asyncio.Socket, zmq.Socket[bytes]],
) -> None:
    router, dealer = pair
    clock = HeardClock(0.0)
    dealer.send(b"heartbeat")
    # Waits (in ZeroMQ, not in the socket's asyncio wrapper) until it is queued.
    assert zmq.Socket.shadow(router.underlying).poll(2000, zmq.POLLIN)
    clock.tick(router, PERIOD, PERIOD)
    assert clock.until == 0.0


def test_a_late_tick_proves_nothing_and_the_next_one_on_time_does(
    pair: tuple[zmq.asyncio.Socket, zmq.Socket[bytes]],
) -> None:
    router, _dealer = pair
    clock = HeardClock(0.0)
    late = (STALL_PERIODS + 1) * PERIOD  # the process was stalled
    clock.tick(router, late, PERIOD)
    assert clock.until == 0.0
    clock.tick(router, late + PERIOD, PERIOD)
    assert clock.until == late + PERIOD
