"""A worker's bags across a master restart.

When the master stops answering for most of a lease period (the fence), or
says it does not know this worker (Reset: it restarted), the worker drops its
bags as it always did: every request stops, nothing is reported, since the
domains may be someone else's by now. It still remembers them (Kept): the
bag, the results it sent, and for a finished bag its BagDone. Its next Hello
lists them (HeldBag); a restarted master adopts those it recorded for this
holder (master/leasing/adoption.py) and names them in its Welcome, with the
results it asks for again. An adopted bag is crawled on from the URLs not
answered yet, under the new session; a finished one sends its BagDone again.
What no master adopts is forgotten. A finished bag is remembered from its end
until the master says its results are stored: each heartbeat lists those
kept, and the master's Pong names those it settled.

So after a master crash only the requests that were on the wire when the
bags were dropped are fetched again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from nadird.protocol.limits import MAX_HELD
from nadird.protocol.messages import Bag, BagDone, HeldBag, PageResult, Welcome
from nadird.worker.bag import BagRun

# The bags running, by lease (their tasks are the agent's: worker/core.py).
Bags = dict[str, tuple[Bag, BagRun]]

# Dropped bags are remembered this many lease periods after they were
# dropped (worker.keep_dropped_periods): a restarted master gives unclaimed
# domains away a few heartbeats after it started, so a master that took
# longer to come back could not adopt them.
KEEP_PERIODS = 10.0
# A finished bag is remembered until the master says its results are stored
# (Pong.settled): a bag forgotten sooner, by a clock, left a master that
# crashed with its results unstored (a slow store, a loaded machine, a long
# store.flush_interval) a lease record nobody claimed, and its URLs were
# fetched again. One the master answers about without settling goes once
# it has for as long as a dropped bag is kept.


@dataclass(frozen=True, slots=True)
class Kept:
    """A bag dropped or finished, remembered for a master that may adopt it."""

    bag: Bag
    run: BagRun
    done: BagDone | None  # None: dropped before it finished
    at: float  # monotonic: when it was dropped, or finished


def remember(kept: dict[str, Kept], bags: Bags, now: float) -> None:
    for lease, (bag, run) in bags.items():
        kept[lease] = Kept(bag, run, None, now)


def forget(kept: dict[str, Kept], now: float, last_ack: float, keep: float) -> int:
    """Forget what no master could still adopt: dropped bags `keep` seconds
    after they were dropped, finished ones once a master answered `keep`
    seconds after their end without settling them (never while no master
    answers: a restarted one needs them). Returns how many dropped bags went."""
    dropped = 0
    for lease, k in list(kept.items()):
        if k.done is not None:
            gone = k.at < last_ack - keep
        else:
            gone = now - k.at > keep
            dropped += gone
        if gone:
            del kept[lease]
    return dropped


def finished_leases(kept: dict[str, Kept]) -> list[str]:
    """The finished bags kept, the newest first (as many as a Hello lists)."""
    return [lease for lease, k in reversed(kept.items()) if k.done is not None][:MAX_HELD]


def settle(kept: dict[str, Kept], leases: list[str]) -> None:
    """The master stored the results of these finished bags: forget them."""
    for lease in leases:
        k = kept.get(lease)
        if k is not None and k.done is not None:
            del kept[lease]


def claims(bags: Bags, kept: dict[str, Kept]) -> list[HeldBag]:
    held = [
        HeldBag(bag.lease, bag.epoch, bag.domain, run.token, list(run.sent))
        for bag, run in bags.values()
        if not run.dropped
    ]
    room = max(0, MAX_HELD - len(held))
    for k in list(kept.values())[::-1][:room]:  # the newest first
        bag, run = k.bag, k.run
        held.append(
            HeldBag(bag.lease, bag.epoch, bag.domain, run.token, list(run.sent),
                    done=k.done is not None)
        )  # fmt: skip
    return held


@dataclass(slots=True)
class Outcome:
    """What a Welcome means for the bags held and remembered."""

    dropped: list[str] = dataclasses.field(default_factory=list)  # running, not listed
    # Per adopted bag, the results the master asks for again (those it kept).
    resend: list[tuple[Bag, list[PageResult]]] = dataclasses.field(default_factory=list)
    again: list[BagDone] = dataclasses.field(default_factory=list)  # to send again
    resume: list[tuple[Bag, BagRun]] = dataclasses.field(default_factory=list)


def take_over(bags: Bags, kept: dict[str, Kept], welcome: Welcome, now: float) -> Outcome:
    """Apply a Welcome: bags it lists go on, the others are dropped (marked
    so, and out of `bags`); the results it asks for are to be sent again
    under its session. A lease or fingerprint it names that was never held
    or sent is passed over. A finished bag adopted is kept again until this
    master settles it (its results are sent again, not stored yet)."""
    wanted = dict(zip(welcome.adopted, welcome.resend, strict=True))
    outcome = Outcome()
    for lease, k in list(kept.items()):
        fps = wanted.get(lease)
        del kept[lease]  # adopted or not, it is settled now
        if fps is None:
            continue
        k.run.token = welcome.session
        pages = [k.run.sent[fp] for fp in fps if fp in k.run.sent]
        outcome.resend.append((k.bag, pages))
        if k.done is not None:
            outcome.again.append(k.done)
            kept[lease] = Kept(k.bag, k.run, k.done, now)
        else:
            outcome.resume.append((unanswered(k.bag, k.run), k.run))
    for lease, (_bag, run) in list(bags.items()):
        if lease not in wanted:
            run.dropped = True
            del bags[lease]
            outcome.dropped.append(lease)
    return outcome


def unanswered(bag: Bag, run: BagRun) -> Bag:
    """The bag with only the URLs no result was sent for."""
    keep = [i for i, fp in enumerate(bag.fps) if fp not in run.sent]

    def pick(values: list[object]) -> list[object]:
        return [values[i] for i in keep] if values else []

    return dataclasses.replace(
        bag,
        urls=[bag.urls[i] for i in keep],
        fps=[bag.fps[i] for i in keep],
        depths=[bag.depths[i] for i in keep],
        rows=pick(bag.rows),  # type: ignore[arg-type]
        attempts=pick(bag.attempts),  # type: ignore[arg-type]
        validators=pick(bag.validators),  # type: ignore[arg-type]
        requests=pick(bag.requests),  # type: ignore[arg-type]
        robots=[],
    )


def job_name(bag: Bag) -> str:
    return str(bag.job.get("name", ""))
