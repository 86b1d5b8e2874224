"""The worker's side of the protocol, without sockets.

The master's word (Welcome, Pong, Refused, Reset, Bag, Shutdown) and the
clock come in; what to do comes out as actions: messages to send, bags to
start or cancel, results to send again, the link to mark registered, the
process to end. The agent (service/agent.py) only receives, decodes and
carries the actions out, so every decision here is testable without ZeroMQ
or a running event loop; worker/held.py keeps the bags a restarted master
may adopt.

Fencing: a Pong answers only a heartbeat still awaited, and renews the
leases only as of that heartbeat's send time. Without such an answer for
most of a lease period (`fenced`), no request starts and the bags are
dropped at the next tick: the master may have given their domains to
someone else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from nadird.common.logs import get_logger
from nadird.protocol.messages import (
    Bag,
    BagDone,
    Credit,
    Heartbeat,
    Hello,
    Message,
    PageResult,
    Pong,
    Refused,
    Reset,
    Shutdown,
    Welcome,
)
from nadird.worker.bag import BagRun
from nadird.worker.held import (
    KEEP_PERIODS,
    Bags,
    Kept,
    claims,
    finished_leases,
    forget,
    job_name,
    remember,
    settle,
    take_over,
)

log = get_logger()

# Until a Welcome says otherwise (the master's own settings).
HEARTBEAT_INTERVAL = 2.0
LEASE_TTL = 30.0
# The master renewed our leases when it read a heartbeat, not before; a
# tenth of the period covers the Bag's trip to a successor.
FENCE_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class Send:
    """A message to the master on the control socket."""

    msg: Message


@dataclass(frozen=True, slots=True)
class Start:
    """Crawl this bag; `sent`: an adopted bag's results from before."""

    bag: Bag
    sent: dict[bytes, PageResult] | None = None


@dataclass(frozen=True, slots=True)
class Cancel:
    """Stop this bag's task now, unreported: its lease is no longer ours."""

    lease: str


@dataclass(frozen=True, slots=True)
class Resend:
    """Results an adopting master asks for again, under its session (PUSH)."""

    lease: str
    epoch: int
    job: str
    session: bytes
    pages: list[PageResult]


@dataclass(frozen=True, slots=True)
class Welcomed:
    """The master took us in at `at`: the link is up, the heartbeat loop
    wakes (the Welcome's interval may be shorter than the one it sleeps)."""

    at: float


@dataclass(frozen=True, slots=True)
class Exit:
    """The master's crawl is done and this worker exits when it is."""


Action = Send | Start | Cancel | Resend | Welcomed | Exit


@dataclass(frozen=True, slots=True)
class Load:
    """What a heartbeat reports of the worker's load."""

    cpu_percent: float = 0.0
    rss_mb: float = 0.0
    proxies: int = 0


class WorkerCore:
    """The worker's protocol state: its registration, heartbeats, the bags
    it runs and those it keeps for a restarted master."""

    def __init__(
        self,
        hello: Hello,
        exit_when_done: bool,
        now: float,
        keep_dropped_periods: float = KEEP_PERIODS,
    ) -> None:
        self.hello = hello  # said again with the bags held at the time
        self.node = hello.node
        self.capacity = hello.capacity
        self.exit_when_done = exit_when_done
        self.registered = False
        # The token of our registration (Welcome.session): every Results of a
        # bag carries the one the bag came under.
        self.session = b""
        self.heartbeat_interval = HEARTBEAT_INTERVAL
        self.lease_ttl = LEASE_TTL
        # The send time of the newest heartbeat the master answered (or of
        # the Welcome): our leases were renewed no earlier than that.
        self.last_ack = now
        self.heartbeats: dict[int, float] = {}  # seq -> send time, not answered yet
        self.seq = 0
        self.bags: Bags = {}
        # Bags dropped or finished lately, for a restarted master to adopt.
        self.kept: dict[str, Kept] = {}
        self.keep_dropped_periods = keep_dropped_periods  # lease periods (held.py)

    # ------------------------------------------------------------- clock
    def fenced(self, now: float) -> bool:
        """Whether our leases may be someone else's by now."""
        return now - self.last_ack > self.lease_ttl * FENCE_SHARE

    def tick(self, now: float, load: Callable[[], Load]) -> list[Action]:
        """A heartbeat is due: forget what no master could adopt, drop the
        bags when fenced, then say hello (not registered) or heartbeat
        (`load` is read only then)."""
        forgotten = forget(
            self.kept, now, self.last_ack, self.lease_ttl * self.keep_dropped_periods
        )
        if forgotten:
            log.info("held_bags_forgotten", bags=forgotten, kept=len(self.kept))
        actions: list[Action] = []
        if self.bags and self.fenced(now):
            actions += self.drop_bags("no answer from the master within the lease period", now)
        if not self.registered:
            return [*actions, Send(self.say_hello())]
        self.seq += 1
        self.heartbeats[self.seq] = now
        measured = load()
        beat = Heartbeat(
            node=self.node,
            leases=list(self.bags),
            inflight=len(self.bags),
            seq=self.seq,
            cpu_percent=measured.cpu_percent,
            rss_mb=measured.rss_mb,
            proxies=measured.proxies,
            finished=finished_leases(self.kept),
        )
        return [*actions, Send(beat)]

    def say_hello(self) -> Hello:
        """Our Hello, listing the bags we run and keep (held.py)."""
        return dataclasses.replace(self.hello, held=claims(self.bags, self.kept))

    # ---------------------------------------------------------- messages
    def on_message(self, msg: Message, now: float) -> list[Action]:
        """What a decoded message of the master means at `now`. A message only
        a worker sends (Hello, Results, ...) is logged and changes nothing."""
        if isinstance(msg, Pong):
            self._on_pong(msg)
        elif isinstance(msg, Refused):
            # Asked again at every heartbeat until the name is free.
            self.registered = False
            log.error("refused_by_master", reason=msg.reason)
        elif isinstance(msg, Reset):
            # The master does not know us (it restarted): hello at once.
            return [*self.drop_bags(msg.reason, now), Send(self.say_hello())]
        elif isinstance(msg, Welcome):
            return self._on_welcome(msg, now)
        elif isinstance(msg, Bag):
            return self._on_bag(msg)
        elif isinstance(msg, Shutdown):
            return self._on_shutdown(msg, now)
        else:
            log.warning("message_dropped", peer="master", reason=f"unexpected {msg.KIND}")
        return []

    def _on_pong(self, msg: Pong) -> None:
        settle(self.kept, msg.settled)
        # A seq never sent, or already answered or passed over, renews nothing.
        sent = self.heartbeats.pop(msg.seq, None)
        if sent is not None:
            self.last_ack = max(self.last_ack, sent)
            self.heartbeats = {k: v for k, v in self.heartbeats.items() if k > msg.seq}

    def _on_bag(self, msg: Bag) -> list[Action]:
        if msg.lease in self.bags:
            # Started twice, the first run would go untracked and crawl the
            # domain beside the second: one run per lease.
            log.warning("message_dropped", peer="master", reason="bag already running")
            return []
        return [Start(msg)]

    def _refuse_welcome(self, msg: Welcome) -> str | None:
        """Why this Welcome is not taken, or None to take it."""
        if msg.node != self.node:
            return f"welcome for node {msg.node!r}, not this one"
        if not (msg.heartbeat_interval > 0 and msg.lease_ttl > 0):
            # A zero interval would make the heartbeat loop spin.
            return "welcome with a heartbeat interval or lease period not above 0"
        return None

    def _on_welcome(self, msg: Welcome, now: float) -> list[Action]:
        if self.registered and msg.session == self.session:
            # The answer to a Hello said again before the first Welcome came
            # (one per message queued while the master was away): taking it
            # would register us again and offer slots filled since.
            return []
        refused = self._refuse_welcome(msg)
        if refused is not None:
            log.warning("message_dropped", peer="master", reason=refused)
            return []
        outcome = take_over(self.bags, self.kept, msg, now)
        actions: list[Action] = [Cancel(lease) for lease in outcome.dropped]
        if outcome.dropped:
            log.warning("bags_dropped", bags=len(outcome.dropped), why="not listed by the master")
        for bag, pages in outcome.resend:
            actions.append(Resend(bag.lease, bag.epoch, job_name(bag), msg.session, pages))
        self.session = msg.session
        # Adopted: crawled on, under the new session.
        actions += [Start(bag, run.sent) for bag, run in outcome.resume]
        actions += [Send(done) for done in outcome.again]
        self.last_ack = now
        self.registered = True
        self.heartbeat_interval = msg.heartbeat_interval
        self.lease_ttl = msg.lease_ttl
        running = set(self.bags) | {bag.lease for bag, _run in outcome.resume}
        free = self.capacity - len(running)
        actions += [Welcomed(now), Send(Credit(node=self.node, bags=free))]
        log.info("worker_registered", lease_ttl=msg.lease_ttl)
        return actions

    def _on_shutdown(self, msg: Shutdown, now: float) -> list[Action]:
        log.info("master_shutdown", reason=msg.reason, done=msg.done)
        # Our leases end with that master run: stop crawling their domains
        # now, so the next run may lease them at once (pages fetched so far
        # are still sent). Hello again at the next heartbeat.
        actions = self.drop_bags("master stopping", now, keep=False)
        if msg.done and self.exit_when_done:
            actions.append(Exit())
        return actions

    def drop_bags(self, why: str, now: float, keep: bool = True) -> list[Action]:
        """Stop every bag at once, unreported: their leases are no longer ours
        (`keep`: unless a restarted master adopts them, see held.py)."""
        if self.bags:
            log.warning("bags_dropped", bags=len(self.bags), why=why)
        if keep:
            remember(self.kept, self.bags, now)
        actions: list[Action] = []
        for lease, (_bag, run) in self.bags.items():
            run.dropped = True
            actions.append(Cancel(lease))
        self.bags.clear()
        self.registered = False
        return actions

    # -------------------------------------------------------------- bags
    def started(self, bag: Bag, run: BagRun) -> None:
        """The agent started crawling `bag` as `run`."""
        self.bags[bag.lease] = (bag, run)

    def ended(self, bag: Bag, run: BagRun) -> None:
        """`run` stopped, whatever the reason (a resumed bag runs on under
        the same lease as another run)."""
        if self.bags.get(bag.lease, (bag, None))[1] is run:
            del self.bags[bag.lease]

    def finished(self, bag: Bag, run: BagRun, done: BagDone, now: float) -> list[Action]:
        """A bag ended and was not dropped: report it, ask for another one
        unless the worker is stopping."""
        if run.dropped:
            return []
        # Kept until the master says its results are stored (held.py).
        self.kept[done.lease] = Kept(bag, run, done, now)
        actions: list[Action] = [Send(done)]
        if not run.stopping:
            actions.append(Send(Credit(node=self.node, bags=1)))
        return actions
