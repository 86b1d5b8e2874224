"""Stopping the master's loops: a cancellation that arrives as a loop is woken
is never lost (asyncio.wait_for on Python 3.11 loses it; a crawl cut by
--for could then hang after its workers had gone)."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from nadird.common.waits import wait_set
from nadird.master.service.loops import LoopGuard


@pytest.mark.parametrize("timeout", [10.0, None])
def test_a_cancellation_in_the_turn_the_event_is_set_ends_the_wait(
    timeout: float | None,
) -> None:
    async def scenario() -> tuple[bool, int]:
        event = asyncio.Event()
        wakes = 0

        async def loop() -> None:
            nonlocal wakes
            while True:
                await wait_set(event, timeout)
                event.clear()
                wakes += 1

        task = asyncio.create_task(loop())
        await asyncio.sleep(0.01)  # the loop waits
        event.set()
        task.cancel()  # the same turn: the wait is over and cancelled at once
        done, _ = await asyncio.wait({task}, timeout=2)
        return task in done and task.cancelled(), wakes

    ended, wakes = asyncio.run(scenario())
    assert ended and wakes == 0


def test_wait_set_says_whether_the_event_came_or_the_time_ran_out() -> None:
    async def scenario() -> tuple[bool, bool]:
        event = asyncio.Event()
        timed_out = await wait_set(event, 0.01)
        asyncio.get_running_loop().call_later(0.01, event.set)
        return timed_out, await wait_set(event, 5)

    assert asyncio.run(scenario()) == (False, True)


def test_the_guard_stops_a_loop_that_swallowed_its_first_cancellation() -> None:
    async def scenario() -> int:
        guard = LoopGuard(Counter())
        swallowed = 0

        async def loop() -> None:
            nonlocal swallowed
            while True:
                try:
                    await asyncio.sleep(10)
                except asyncio.CancelledError:
                    if swallowed:
                        raise
                    swallowed += 1  # as a wait that lost its cancellation would

        guard.start("dispatch", loop)
        await asyncio.sleep(0.01)
        await asyncio.wait_for(guard.stop(), 5)
        return swallowed

    assert asyncio.run(scenario()) == 1
