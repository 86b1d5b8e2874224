"""The Welcome a worker gets, with the leases it may go on with, and what a
clean stop leaves for the next run to wait for.

A part of MasterCore (core.py), like dispatch.py: the attributes and the two
methods declared below are MasterCore's. A Hello may list bags the worker
still holds (HeldBag): those of the previous master run are adopted when
their records match (adoption.py); a Hello repeated by the same registration
(hellos queue up while the master is away) keeps its session and every
live lease: a Welcome lists the leases the worker may go on with.
"""

from __future__ import annotations

from collections.abc import Sequence

from nadird.config import Config
from nadird.master.frontier.queues import Frontier
from nadird.master.leasing.adoption import Adoption
from nadird.master.leasing.lease_mark import LeaseMark
from nadird.master.leasing.leases import Lease, LeaseTable
from nadird.master.leasing.nodes import Node, NodeRegistry
from nadird.protocol.messages import HeldBag, Hello, Message, Welcome

Outgoing = list[tuple[bytes, Message]]


class Welcoming:
    config: Config
    frontier: Frontier
    leases: LeaseTable
    adoption: Adoption
    lease_mark: LeaseMark
    nodes: NodeRegistry

    def _reclaim(self, leases: Sequence[Lease], now: float, why: str) -> None:
        raise NotImplementedError  # MasterCore's

    def _close_if_finished(self, lease: Lease, now: float) -> None:
        raise NotImplementedError  # MasterCore's

    def _alive(self, node: Node, now: float) -> bool:
        raise NotImplementedError  # MasterCore's

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
            self._close_if_finished(lease, now)  # a finished bag with nothing due
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
            alive = node is not None and self._alive(node, now)
            (told if alive else silent).append(lease)
        self.lease_mark.settle(max((lease.expires for lease in silent), default=None), now)
        if self.leases.records is not None:  # no one will claim those: none waits
            self.leases.records.delete([lease.id for lease in told])


def resend(leases: list[Lease], held: list[HeldBag]) -> list[list[bytes]]:
    """Per adopted lease: the results the worker sent that are still due
    (their URLs still queued and pending), to be sent again."""
    sent = {bag.lease: bag.sent for bag in held}
    return [[fp for fp in sent.get(lease.id, []) if fp in lease.pending] for lease in leases]
