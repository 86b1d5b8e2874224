"""A MasterCore without sockets, on a temporary FrontierDB, and the messages
a worker would send it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nadird.common.urls import fingerprint
from nadird.config import Config, MasterConfig
from nadird.job.spec import Job
from nadird.master.core import MasterCore
from nadird.master.frontier.seen import SeenSet
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.messages import Bag, Credit, Hello, PageResult, Results, Welcome

A_URLS = [f"http://a.test/{i}" for i in range(3)]
B_URLS = ["http://b.test/"]
T0 = 1000.0
TTL = 2.0
HEARTBEAT = 0.5


def make_core(
    state: Path, jobs: dict[str, Job] | None = None, **master: Any
) -> Iterator[MasterCore]:
    """A core with A_URLS and B_URLS queued for the default job."""
    settings = MasterConfig(
        state_dir=str(state), lease_ttl=TTL, heartbeat_interval=HEARTBEAT, bag_size=10, **master
    )
    config = Config(master=settings, jobs={"default": Job(), **(jobs or {})})
    core = MasterCore(config, FrontierDB(state / "frontier.db"), SeenSet(1000, 0.01))
    admit(core, A_URLS + B_URLS)
    try:
        yield core
    finally:
        core.frontier.db.close()


def admit(core: MasterCore, urls: list[str], job: str = "default") -> int:
    added = core.admission.admit(job, urls, [fingerprint(u) for u in urls], 0)
    core.frontier.db.commit()
    return added


def register(
    core: MasterCore,
    node: str,
    user: str = "",
    now: float = T0,
    group: str = "default",
    capabilities: list[str] | None = None,
    pid: int = 0,
) -> bytes:
    """Hello as `node` (capacity 4, four credits) from process `pid`; returns
    the session token of its Welcome."""
    identity = node.encode()
    hello = Hello(node=node, capacity=4, group=group, capabilities=capabilities or [], pid=pid)
    [(_, welcome)] = core.on_control(identity, hello, now, user)
    assert isinstance(welcome, Welcome) and len(welcome.session) == 16
    core.on_control(identity, Credit(node=node, bags=4), now, user)
    return welcome.session


def bags(core: MasterCore, now: float = T0) -> dict[str, Bag]:
    """Dispatch; the bags handed out, by domain."""
    out = {}
    for _, msg in core.dispatch(now):
        assert isinstance(msg, Bag)
        out[msg.domain] = msg
    return out


def page(url: str, fp: bytes | None = None, title: str = "real", **fields: Any) -> PageResult:
    return PageResult(
        **{
            "url": url,
            "fp": fingerprint(url) if fp is None else fp,
            "final_url": url,
            "status": 200,
            "fetched_at": T0,
            "depth": 0,
            "data": {"title": title},
            **fields,
        }
    )


def results(bag: Bag, node: str, session: bytes, pages: list[PageResult]) -> Results:
    return Results(
        node=node, lease=bag.lease, epoch=bag.epoch, job="default", pages=pages, session=session
    )
