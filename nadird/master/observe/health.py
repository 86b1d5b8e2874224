"""Whether the master can write its state: frontier.db, seen.bloom, robots.db, the store.

A full disk (or a read-only or failing one) makes writes fail while the rest of
the master is fine. Each file that failed is tracked here until one of its
writes succeeds again: the master leases no bag meanwhile, reports itself
unhealthy (/healthz, /metrics, status), and tries the write again with
back-off. One error is logged when a file starts failing and one line when it
recovers, whatever the number of attempts in between.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nadird.common.logs import get_logger

log = get_logger()
Clock = Callable[[], float]


@dataclass(slots=True)
class Failure:
    error: str
    since: float  # monotonic
    attempts: int = 1
    retry_at: float = 0.0  # monotonic


class StateHealth:
    def __init__(
        self,
        state_dir: str,
        retry_delay: float = 1.0,
        retry_max_delay: float = 30.0,
        give_up_after: float | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.state_dir = state_dir
        self.retry_delay = retry_delay
        self.retry_max_delay = retry_max_delay
        self.give_up_after = give_up_after
        self._clock = clock
        self._failing: dict[str, Failure] = {}
        self.failures = 0  # failed writes, all files, ever (a counter for /metrics)
        # Set when the master cannot go on (the reason): it then stops, status 1.
        self.fatal: str | None = None
        self.on_fatal: Callable[[], None] | None = None

    @property
    def healthy(self) -> bool:
        return not self._failing and self.fatal is None

    def failing(self, name: str) -> bool:
        return name in self._failing

    def failed(self, name: str, exc: BaseException) -> None:
        """A write of `name` failed; the next try is due after the back-off."""
        now = self._clock()
        self.failures += 1
        failure = self._failing.get(name)
        if failure is None:
            failure = self._failing[name] = Failure(describe(exc), now)
            log.error(
                "state_write_failed",
                file=name,
                state_dir=self.state_dir,
                error=failure.error,
                action="no new bags until it can be written; retried with back-off",
            )
        else:
            failure.attempts += 1
            failure.error = describe(exc)
        delay = self.retry_delay * 2 ** min(failure.attempts - 1, 30)
        failure.retry_at = now + min(self.retry_max_delay, delay)

    def ok(self, name: str) -> None:
        """A write of `name` succeeded."""
        failure = self._failing.pop(name, None)
        if failure is not None:
            log.info(
                "state_write_recovered",
                file=name,
                attempts=failure.attempts,
                seconds=round(self._clock() - failure.since, 3),
            )

    def may_try(self, name: str) -> bool:
        """False while `name` is failing and its back-off has not run out."""
        failure = self._failing.get(name)
        return failure is None or self._clock() >= failure.retry_at

    def give_up(self, reason: str) -> None:
        if self.fatal is None:
            self.fatal = reason
            log.error("state_lost", state_dir=self.state_dir, reason=reason)
            if self.on_fatal is not None:
                self.on_fatal()

    def check_give_up(self) -> None:
        """Past `give_up_after` seconds of failing writes, the master stops."""
        if self.give_up_after is None or self.fatal is not None:
            return
        now = self._clock()
        for name, failure in self._failing.items():
            if now - failure.since >= self.give_up_after:
                self.give_up(
                    f"{name} in {self.state_dir} could not be written for "
                    f"{self.give_up_after:g} s (master.state_give_up_after): {failure.error}"
                )
                return

    def status(self) -> dict[str, Any]:
        now = self._clock()
        return {
            "healthy": self.healthy,
            "failing": {
                name: {
                    "error": f.error,
                    "for_s": round(now - f.since, 3),
                    "attempts": f.attempts,
                    "retry_in_s": round(max(0.0, f.retry_at - now), 3),
                }
                for name, f in sorted(self._failing.items())
            },
            "fatal": self.fatal,
        }


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]
