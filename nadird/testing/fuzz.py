"""Hypothesis strategies for protocol messages and raw frames (tests and the
long fuzz run in scripts/fuzz_protocol.py share them)."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import msgpack
from hypothesis import strategies as st

from nadird.common.urls import fingerprint
from nadird.config import Config, MasterConfig
from nadird.master.core import MasterCore
from nadird.master.frontier.seen import SeenSet
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.codec import encode
from nadird.protocol.messages import (
    Bag,
    BagDone,
    Bye,
    Credit,
    Heartbeat,
    Hello,
    Message,
    PageResult,
    Results,
)

names = st.sampled_from(["w1", "w2", "ghost", ""]) | st.text(max_size=12)
fps = st.binary(min_size=16, max_size=16) | st.sampled_from([b"\x00" * 16, b"\x01" * 16])
urls = st.sampled_from(["http://a.test/", "http://a.test/x", "http://b.test/"]) | st.text(
    max_size=40
)
# LIVE: aimed at a live lease as its holder would send it (see `signed`).
LIVE = "@live"
leases = st.text(max_size=12) | st.just(LIVE)
small = st.integers(min_value=-3, max_value=50)


@st.composite
def page_results(draw: st.DrawFn) -> PageResult:
    links = draw(st.lists(urls, max_size=4))
    return PageResult(
        url=draw(urls),
        fp=draw(fps),
        final_url=draw(urls),
        status=draw(st.sampled_from([0, 200, 404, 429, 500, 503]) | small),
        fetched_at=draw(st.floats(allow_nan=False, allow_infinity=False)),
        depth=draw(small),
        error=draw(st.none() | st.sampled_from(["timeout: x", "connect: y"])),
        links=links,
        link_fps=[draw(fps) for _ in links],
        body=draw(st.none() | st.binary(max_size=64)),
        elapsed=draw(st.floats(min_value=0, max_value=100)),
    )


messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(Hello, node=names, capacity=st.integers(1, 20)),
    st.builds(Credit, node=names, bags=small),
    st.builds(Heartbeat, node=names, leases=st.lists(leases, max_size=3), seq=small),
    st.builds(
        BagDone,
        node=names,
        lease=leases,
        epoch=small,
        returned=st.lists(fps, max_size=3),
        wait=st.floats(0, 5),
    ),
    st.builds(Bye, node=names),
    st.builds(
        Results,
        node=names,
        lease=leases,
        epoch=small,
        job=st.sampled_from(["default", "x"]),
        pages=st.lists(page_results(), max_size=3),
    ),
    st.builds(
        Bag,
        lease=leases,
        epoch=small,
        domain=names,
        job=st.just({}),
        urls=st.just([]),
        fps=st.just([]),
        depths=st.just([]),
        delay=st.floats(0, 1),
        domain_concurrency=small,
        ttl=st.floats(0, 5),
    ),
)


def _mutate(frame: bytes, cut: int, flip: int) -> bytes:
    data = bytearray(frame[: max(1, cut % (len(frame) + 1))])
    if data:
        data[flip % len(data)] ^= 0xFF
    return bytes(data)


values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats()
    | st.text(max_size=20)
    | st.binary(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)

frames: st.SearchStrategy[bytes] = st.one_of(
    st.binary(max_size=300),
    messages.map(encode),
    st.builds(_mutate, messages.map(encode), st.integers(0, 400), st.integers(0, 400)),
    values.map(lambda v: msgpack.packb(v, use_bin_type=True)),
    st.builds(
        lambda body, kind: msgpack.packb({**body, "v": 1, "k": kind}, use_bin_type=True),
        st.dictionaries(st.text(max_size=8), values, max_size=5),
        st.sampled_from(["hello", "credit", "heartbeat", "bag_done", "results", "bye"]),
    ),
)


def fresh_core(state: Path) -> MasterCore:
    config = Config(
        master=MasterConfig(state_dir=str(state), lease_ttl=2.0, heartbeat_interval=0.5)
    )
    core = MasterCore(config, FrontierDB(state / "frontier.db"), SeenSet(10_000, 0.01))
    urls = [f"http://a.test/{i}" for i in range(5)] + ["http://b.test/"]
    core.admission.admit("default", urls, [fingerprint(u) for u in urls], 0)
    return core


def feed(core: MasterCore, identity: bytes, msg: Message, now: float) -> None:
    if isinstance(msg, Results):
        core.on_results(signed(core, msg), now)
    else:
        core.on_control(identity, msg, now)
    core.dispatch(now)
    core.expire(now)


def signed(core: MasterCore, msg: Results) -> Results:
    """A Results for LIVE becomes one the master accepts: the holder's name,
    lease and session token, pages for that lease's URLs (their other fields
    as drawn). Random leases and tokens alone would never get past acceptance."""
    lease = next(iter(core.leases), None)
    if msg.lease != LIVE or lease is None:
        return msg
    leased = itertools.cycle(lease.urls.items())
    pages = [
        dataclasses.replace(p, fp=fp, url=url)
        for p, (fp, url) in zip(msg.pages, leased, strict=False)
    ]
    return dataclasses.replace(
        msg,
        node=lease.node,
        lease=lease.id,
        epoch=lease.epoch,
        session=lease.holder.session,
        pages=pages,
    )


def consistent(core: MasterCore) -> None:
    """What holds after any message: each URL is in at most one lease, and
    its domain's counts say so; credits stay within capacity; no count goes
    below zero; the frontier's count is the queue table's."""
    frontier = core.frontier
    assert frontier.queued == frontier.db.total_rows() >= 0
    holder: dict[bytes, str] = {}
    for lease in core.leases:
        ds = frontier.get(lease.domain)
        assert ds is not None and ds.leased
        for fp in lease.pending:
            assert holder.setdefault(fp, lease.id) == lease.id, "a URL in two leases"
        # URLs answered leave `out`; the ones handed back wait in `returned`.
        assert ds.out == len(lease.pending) + len(lease.returned)
    for ds in frontier.queues():
        assert min(ds.rows, ds.out, ds.settling, ds.available) >= 0, ds
        assert ds.leased or ds.out == 0, ds
    assert sum(ds.rows for ds in frontier.queues()) == frontier.queued
    for node in core.nodes.all():
        assert 0 <= node.credits <= node.capacity
    for counter in (core.stats, core.errors, core.refused, core.domain_results):
        assert min(counter.values(), default=0) >= 0


def run_script(script: list[tuple[bytes, Message]]) -> None:
    """Feed a sequence of (sender, message) to a fresh master, checking it after each."""
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as tmp:
        core = fresh_core(Path(tmp))
        now = time.monotonic()
        for step, (identity, msg) in enumerate(script):
            feed(core, identity, msg, now + step * 0.7)
            consistent(core)
        core.frontier.db.close()
