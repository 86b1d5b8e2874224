"""A worker's warnings while its master is not heard, and a master host that
does not resolve."""

from __future__ import annotations

import asyncio
import itertools

from nadird.worker.service.health import MAX_WARNING_INTERVAL, MasterLink, resolve_problem


def test_warnings_come_at_doubling_intervals_until_the_master_is_heard() -> None:
    link = MasterLink("tcp://127.0.0.1:1", 1.0)
    start = link.last_heard
    due = [t / 10 for t in range(0, 20_000) if link.due(start + t / 10)]
    assert due[:5] == [1.0, 3.0, 7.0, 15.0, 31.0]
    gaps = [b - a for a, b in itertools.pairwise(due)]
    assert max(gaps) == MAX_WARNING_INTERVAL and gaps == sorted(gaps)
    link.heard(start + 2000.5)
    assert not link.due(start + 2001.4)
    assert link.due(start + 2001.5)  # one warn_after of silence again, then doubling


def test_a_master_host_that_does_not_resolve_is_named() -> None:
    assert asyncio.run(resolve_problem("tcp://localhost:5550")) is None
    assert asyncio.run(resolve_problem("tcp://127.0.0.1:5550")) is None
    assert asyncio.run(resolve_problem("ipc:///tmp/nd/control")) is None
    problem = asyncio.run(resolve_problem("tcp://no..such:5550"))
    assert problem is not None and problem.startswith("cannot resolve no..such")
