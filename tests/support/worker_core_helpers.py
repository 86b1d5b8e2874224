"""A WorkerCore without sockets, and what the agent would do around it:
start the bags it is told to (a BagRun each), record the results it sent."""

from __future__ import annotations

from collections import deque

from nadird.common.urls import fingerprint
from nadird.protocol.messages import Bag, BagDone, Hello, PageResult, Welcome
from nadird.worker.bag import BagRun
from nadird.worker.core import Action, Load, Send, Start, WorkerCore
from nadird.worker.fetch.throttle import Pacer
from nadird.worker.pages import PageTask

T0 = 100.0
TTL = 30.0
CAPACITY = 4
SESSION = b"s" * 16
LOAD = Load(cpu_percent=12.5, rss_mb=80.0, proxies=3)


def new_core(node: str = "w1", exit_when_done: bool = False, now: float = T0) -> WorkerCore:
    return WorkerCore(Hello(node=node, capacity=CAPACITY, pid=42), exit_when_done, now)


def welcome(
    node: str = "w1",
    session: bytes = SESSION,
    adopted: list[str] | None = None,
    resend: list[list[bytes]] | None = None,
) -> Welcome:
    return Welcome(
        node=node, heartbeat_interval=1.0, lease_ttl=TTL, session=session,
        adopted=adopted or [], resend=resend or [],
    )  # fmt: skip


def registered(node: str = "w1", now: float = T0) -> WorkerCore:
    core = new_core(node, now=now)
    core.on_message(welcome(node), now)
    return core


def a_bag(lease: str = "L1", domain: str = "a.test", n: int = 3, epoch: int = 1) -> Bag:
    urls = [f"http://{domain}/{i}" for i in range(n)]
    return Bag(
        lease=lease, epoch=epoch, domain=domain, job={"name": "default"}, urls=urls,
        fps=[fingerprint(u) for u in urls], depths=[0] * n, delay=0.0, domain_concurrency=2,
        ttl=TTL,
    )  # fmt: skip


def start(core: WorkerCore, actions: list[Action]) -> list[Bag]:
    """Start the bags among `actions` as the agent would; returns them."""
    bags = []
    for action in actions:
        if isinstance(action, Start):
            run = run_bag(core, action.bag)
            run.sent.update(action.sent or {})
            bags.append(action.bag)
    return bags


def run_bag(core: WorkerCore, bag: Bag) -> BagRun:
    """The BagRun the agent makes for `bag`, under the current session."""
    tasks = deque(PageTask(u, f, d) for u, f, d in zip(bag.urls, bag.fps, bag.depths, strict=True))
    run = BagRun(tasks, bag.domain_concurrency, Pacer(bag.delay), token=core.session)
    core.started(bag, run)
    return run


def sent_page(core: WorkerCore, lease: str, i: int) -> PageResult:
    """The agent sent the result of the bag's i-th URL."""
    bag, run = core.bags[lease]
    page = a_page(bag.urls[i])
    run.sent[page.fp] = page
    return page


def a_page(url: str) -> PageResult:
    return PageResult(
        url=url, fp=fingerprint(url), final_url=url, status=200, fetched_at=T0, depth=0
    )


def sends(actions: list[Action]) -> list[object]:
    return [a.msg for a in actions if isinstance(a, Send)]


def done_of(bag: Bag, node: str = "w1", returned: list[bytes] | None = None) -> BagDone:
    return BagDone(node=node, lease=bag.lease, epoch=bag.epoch, returned=returned or [])
