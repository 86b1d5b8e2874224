"""State writes failing: back-off up to its cap, and giving up is fatal."""

from __future__ import annotations

import errno

from support.full_disk_helpers import Clock

from nadird.master.observe.health import StateHealth


def test_back_off_doubles_up_to_its_cap_and_a_give_up_is_fatal() -> None:
    clock = Clock()
    health = StateHealth("/state", retry_delay=1.0, retry_max_delay=3.0, give_up_after=10.0)
    health._clock = clock
    fatal: list[bool] = []
    health.on_fatal = lambda: fatal.append(True)
    waits = []
    for _ in range(4):
        health.failed("frontier.db", OSError(errno.ENOSPC, "No space left on device"))
        waits.append(health.status()["failing"]["frontier.db"]["retry_in_s"])
        assert not health.may_try("frontier.db")
    assert waits == [1.0, 2.0, 3.0, 3.0]
    clock.t += 3.0
    assert health.may_try("frontier.db")
    health.check_give_up()
    assert health.fatal is None
    clock.t += 7.0
    health.check_give_up()
    assert fatal == [True] and health.fatal is not None
    assert "master.state_give_up_after" in health.fatal and "No space left" in health.fatal
    assert not health.healthy
