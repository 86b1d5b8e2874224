"""A worker's Hello: refused, or registered and answered with a Welcome that
lists the leases it may go on with; and what a clean stop leaves for the next
run to wait for.

A Hello may list bags the worker still holds (HeldBag): those of the previous
master run are adopted when their records match (adoption.py); a Hello
repeated by the same registration (hellos queue up while the master is away)
keeps its session and every live lease.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from nadird.common.logs import get_logger
from nadird.config import Config
from nadird.master.frontier.queues import Frontier
from nadird.master.leasing.adoption import Adoption
from nadird.master.leasing.closing import LeaseCloser
from nadird.master.leasing.lease_mark import LeaseMark
from nadird.master.leasing.leases import Lease, LeaseTable
from nadird.master.leasing.nodes import Node, NodeRegistry
from nadird.protocol.messages import HeldBag, Hello, Message, Refused, Welcome

log = get_logger()
Outgoing = list[tuple[bytes, Message]]


class Welcomer:
    def __init__(
        self,
        config: Config,
        nodes: NodeRegistry,
        leases: LeaseTable,
        closer: LeaseCloser,
        adoption: Adoption,
        lease_mark: LeaseMark,
        frontier: Frontier,
        stats: Counter[str],
    ) -> None:
        self.config = config  # replaced on a reload (MasterCore.apply_config)
        self.nodes = nodes
        self.leases = leases
        self.closer = closer
        self.adoption = adoption
        self.lease_mark = lease_mark
        self.frontier = frontier
        self.stats = stats

    def hello(
        self,
        identity: bytes,
        msg: Hello,
        now: float,
        user: str,
        connected: Callable[[bytes], bool],
    ) -> Outgoing:
        """`connected` says whether a socket identity's connection is still
        open (the server's socket knows; it is handed in, not kept)."""
        current = self.nodes.get(msg.node)
        # The same registration: the same socket, key and process (a restarted
        # worker has another pid, even if its socket identity were the same).
        same = current is not None and (
            (current.identity, current.user, current.pid, current.host)
            == (identity, user, msg.pid, msg.host)
        )
        if current is not None and same:
            return self._hello_again(current, msg, now)
        if (
            current is not None
            and current.identity != identity
            and self.alive(current, now)
            and not current.restarted_as(msg, user, connected(current.identity))
        ):
            # Another live process uses this name: two workers would share
            # leases. The newcomer is refused until the name falls silent
            # (at once if it is that worker restarted: see Node.restarted_as).
            self.stats["refused_workers"] += 1
            log.warning("worker_refused", worker=msg.node, pid=msg.pid, reason="duplicate node id")
            reason = f"node id {msg.node!r} is in use by a live worker (pid {current.pid})"
            return [(identity, Refused(reason=reason))]
        node, previous = self.nodes.register(identity, msg, now, user)
        if previous is not None:
            # The same worker restarted: whatever its old process held is lost.
            self.closer.reclaim(self.leases.of_node(msg.node), now, "worker restarted")
        log.info("worker_joined", worker=msg.node, capacity=msg.capacity, pid=msg.pid)
        return [(identity, self._welcome(node, [], msg, now))]

    def alive(self, node: Node, now: float) -> bool:
        return now - node.last_seen < 2 * self.config.master.heartbeat_interval

    def _hello_again(self, node: Node, msg: Hello, now: float) -> Outgoing:
        """A repeated Hello of one registration (the same socket, so the same
        process): it keeps its session and every live lease. A bag it dropped
        is not renewed and expires as usual."""
        live = self.leases.of_node(node.node)
        return [(node.identity, self._welcome(node, live, msg, now))]

    def _welcome(self, node: Node, kept: list[Lease], msg: Hello, now: float) -> Welcome:
        master = self.config.master
        ids = {lease.id for lease in kept}
        claims = [bag for bag in msg.held if bag.lease not in ids]
        # The Welcome lets the worker go on with them: renewed from now.
        self.leases.renew(node.node, list(ids), now, master.lease_ttl)
        adopted = kept + self.adoption.claim(node, claims, now, master.lease_ttl)
        for lease in adopted:
            self.closer.close_if_finished(lease, now)  # a finished bag with nothing due
        if adopted:
            self.lease_mark.cover(now)
        if len(adopted) > len(kept):
            self.frontier.db.commit()  # the leases' new holder, before it goes on
        return Welcome(
            node.node, master.heartbeat_interval, master.lease_ttl, node.session,
            adopted=[lease.id for lease in adopted], resend=resend(adopted, msg.held),
        )  # fmt: skip

    def record_clean_stop(self, now: float) -> None:
        """Live workers were told to drop their bags: only leases of silent
        ones may still be crawled when the next run starts."""
        silent: list[Lease] = []
        told: list[Lease] = []  # leases of live workers, told to drop their bags
        for lease in self.leases:
            node = self.nodes.get(lease.node)
            alive = node is not None and self.alive(node, now)
            (told if alive else silent).append(lease)
        self.lease_mark.settle(max((lease.expires for lease in silent), default=None), now)
        if self.leases.records is not None:  # no one will claim those: none waits
            self.leases.records.delete([lease.id for lease in told])


def resend(leases: list[Lease], held: list[HeldBag]) -> list[list[bytes]]:
    """Per adopted lease: the results the worker sent that are still due
    (their URLs still queued and pending), to be sent again."""
    sent = {bag.lease: bag.sent for bag in held}
    return [[fp for fp in sent.get(lease.id, []) if fp in lease.pending] for lease in leases]
