"""A WorkerCore talking to a real MasterCore, in one process, messages
passed by hand: what one decides, the other accepts, across a master
restart too."""

from __future__ import annotations

import time
from pathlib import Path

from support.core_helpers import A_URLS, B_URLS, admit, page
from support.worker_core_helpers import sends, start

from nadird.config import Config, MasterConfig
from nadird.job.spec import Job
from nadird.master.core import MasterCore
from nadird.master.frontier.seen import SeenSet
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.codec import decode, encode
from nadird.protocol.messages import Bag, Hello, Message, Pong, Reset, Results, Welcome
from nadird.worker.core import Action, Load, Resend, WorkerCore

TTL = 2.0
NODE = "w1"
ID = NODE.encode()


def master(state: Path) -> MasterCore:
    """A master run on state/frontier.db; a second one on the same file is
    the run after a crash."""
    settings = MasterConfig(
        state_dir=str(state), lease_ttl=TTL, heartbeat_interval=0.5, bag_size=10
    )
    return MasterCore(
        Config(master=settings, jobs={"default": Job()}),
        FrontierDB(state / "frontier.db"),
        SeenSet(1000, 0.01),
    )


def wire(msg: Message) -> Message:
    """Through the codec, as on the sockets."""
    return decode(encode(msg))


def to_master(core: MasterCore, actions: list[Action], now: float) -> list[Message]:
    """The worker's control messages to the master; the master's answers."""
    answers = []
    for msg in sends(actions):
        for identity, answer in core.on_control(ID, wire(msg), now):
            assert identity == ID
            answers.append(wire(answer))
    return answers


def to_worker(worker: WorkerCore, msgs: list[Message], now: float) -> list[Action]:
    actions: list[Action] = []
    for msg in msgs:
        actions += worker.on_message(msg, now)
    start(worker, actions)  # as the agent would
    return actions


def dispatch(core: MasterCore, now: float) -> list[Message]:
    out: list[Message] = []
    for identity, msg in core.dispatch(now):
        assert identity == ID
        out.append(wire(msg))
    return out


def load() -> Load:
    return Load()


def test_registered_bags_and_heartbeats_answered(tmp_path: Path) -> None:
    core = master(tmp_path)
    admit(core, A_URLS + B_URLS)
    now = time.monotonic()
    worker = WorkerCore(Hello(node=NODE, capacity=4), False, now)
    [welcome] = to_master(core, worker.tick(now, load), now)
    assert isinstance(welcome, Welcome)
    assert to_master(core, to_worker(worker, [welcome], now), now) == []  # the Credit
    bags = dispatch(core, now)
    to_worker(worker, bags, now)
    assert sorted(worker.bags) == sorted(b.lease for b in bags if isinstance(b, Bag))
    later = now + TTL * 0.8
    [pong] = to_master(core, worker.tick(later, load), later)
    assert isinstance(pong, Pong)
    to_worker(worker, [pong], later)
    assert worker.last_ack == later and not worker.fenced(now + TTL)
    # The master renewed the leases the heartbeat named: none expires.
    core.expire(now + TTL + 0.1)
    assert core.stats["leases_expired"] == 0
    core.frontier.db.close()


def test_a_restarted_master_adopts_what_the_worker_held(tmp_path: Path) -> None:
    old = master(tmp_path)
    admit(old, A_URLS)
    now = time.monotonic()
    worker = WorkerCore(Hello(node=NODE, capacity=4), False, now)
    welcomed = to_worker(worker, to_master(old, worker.tick(now, load), now), now)
    to_master(old, welcomed, now)  # the Credit
    [a] = dispatch(old, now)
    assert isinstance(a, Bag)
    to_worker(worker, [a], now)
    _bag, run = worker.bags[a.lease]
    # Two results sent; the master stored the first, then died.
    run.sent = {fp: page(url) for url, fp in zip(a.urls[:2], a.fps[:2], strict=True)}
    results = Results(NODE, a.lease, a.epoch, "default", [run.sent[a.fps[0]]], worker.session)
    old.on_durable(old.on_results(wire(results), now))
    old.frontier.db.commit()
    core = master(tmp_path)
    # The new master does not know the worker: its heartbeat gets a Reset.
    [reset] = to_master(core, worker.tick(now + 0.5, load), now + 0.5)
    assert isinstance(reset, Reset)
    actions = to_worker(worker, [reset], now + 0.5)
    assert run.dropped and not worker.registered
    [welcome] = to_master(core, actions, now + 0.5)  # the Hello listing the bag
    assert isinstance(welcome, Welcome) and welcome.adopted == [a.lease]
    actions = to_worker(worker, [welcome], now + 0.5)
    [resend] = [x for x in actions if isinstance(x, Resend)]
    assert [p.url for p in resend.pages] == [a.urls[1]]  # the one not stored
    again = Results(NODE, a.lease, a.epoch, resend.job, resend.pages, resend.session)
    assert [r.url for r in core.on_results(wire(again), now + 0.5)] == [a.urls[1]]
    assert core.refused == {}
    resumed, _run = worker.bags[a.lease]
    assert resumed.urls == a.urls[2:]  # crawled on from the URL not answered
    old.frontier.db.close()
    core.frontier.db.close()
