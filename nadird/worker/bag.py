"""Crawling one bag: at most `domain_concurrency` requests in flight for the
domain, and at least `delay` seconds between the starts of two requests."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from nadird.protocol.messages import PageResult
from nadird.worker.pages import PageProcessor, PageTask


class Pacer:
    """Spaces request starts by `delay` seconds, across all lanes of a bag."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.next_start = 0.0

    async def turn(self) -> None:
        now = time.monotonic()
        start = max(now, self.next_start)
        self.next_start = start + self.delay
        if start > now:
            await asyncio.sleep(start - now)

    def rest(self) -> float:
        """Seconds the domain must still rest after this bag."""
        return max(0.0, self.next_start - time.monotonic())


@dataclass
class BagRun:
    tasks: deque[PageTask]
    concurrency: int
    pacer: Pacer
    stopping: bool = False
    dropped: bool = False  # fenced: the lease is no longer ours, report nothing
    returned: list[bytes] = field(default_factory=list)

    def stop(self) -> None:
        """Take no new URL; the ones not started are handed back."""
        self.stopping = True


async def crawl_bag(
    run: BagRun, processor: PageProcessor, emit: Callable[[PageResult], None]
) -> None:
    async def lane() -> None:
        while run.tasks and not run.stopping:
            task = run.tasks.popleft()
            await run.pacer.turn()
            emit(await processor.process(task))

    lanes = max(1, min(run.concurrency, len(run.tasks)))
    await asyncio.gather(*(lane() for _ in range(lanes)))
    run.returned.extend(task.fp for task in run.tasks)
    run.tasks.clear()
