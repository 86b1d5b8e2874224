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
What no master adopts is forgotten.

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
# Seconds a finished bag is remembered after the last answer that followed
# it: the master stores a result within a second or so (store.flush_interval
# plus a group commit); only a master that died sooner asks for it again.
FINISHED_KEEP = 5.0


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


def forget(kept: dict[str, Kept], now: float, last_ack: float, keep_dropped: float) -> int:
    """Forget what no master could still adopt: finished bags a master
    answered well after, dropped bags `keep_dropped` seconds after they were
    dropped. Returns how many dropped bags were forgotten."""
    dropped = 0
    for lease, k in list(kept.items()):
        if k.done is not None:
            gone = k.at < last_ack - FINISHED_KEEP
        else:
            gone = now - k.at > keep_dropped
            dropped += gone
        if gone:
            del kept[lease]
    return dropped


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


def take_over(bags: Bags, kept: dict[str, Kept], welcome: Welcome) -> Outcome:
    """Apply a Welcome: bags it lists go on, the others are dropped (marked
    so, and out of `bags`); the results it asks for are to be sent again
    under its session. A lease or fingerprint it names that was never held
    or sent is passed over."""
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
