"""A restarted master adopts the leases its workers still hold (master/
leasing/adoption.py): the holder's claim is checked against what frontier.db
recorded, a forged claim is refused and counted, an unclaimed lease keeps
its domain held until it could have expired."""

from __future__ import annotations

import time
from pathlib import Path

from support.core_helpers import A_URLS, B_URLS, admit, page, results

from nadird.config import Config, MasterConfig
from nadird.job.spec import Job
from nadird.master.core import MasterCore
from nadird.master.frontier.seen import SeenSet
from nadird.master.state.frontier_db import FrontierDB
from nadird.protocol.codec import decode, encode
from nadird.protocol.messages import Bag, BagDone, Credit, HeldBag, Hello, Welcome

TTL = 2.0


def new_core(state: Path, adopt: bool = True) -> MasterCore:
    """A master run on state/frontier.db (a second one on the same file is
    the run after a crash: only what the first one committed is there)."""
    settings = MasterConfig(
        state_dir=str(state), lease_ttl=TTL, heartbeat_interval=0.5, bag_size=10,
        adopt_leases=adopt,
    )  # fmt: skip
    config = Config(master=settings, jobs={"default": Job()})
    return MasterCore(config, FrontierDB(state / "frontier.db"), SeenSet(1000, 0.01))


def hello(core: MasterCore, node: str, held: list[HeldBag], now: float, user: str = "") -> Welcome:
    out = core.on_control(node.encode(), Hello(node=node, capacity=4, held=held), now, user)
    [(_, welcome)] = out
    assert isinstance(welcome, Welcome)
    core.on_control(node.encode(), Credit(node=node, bags=4), now, user)
    return welcome


def first_run(state: Path, user: str = "") -> tuple[MasterCore, bytes, dict[str, Bag]]:
    """w1 gets both domains; the run then dies without a word."""
    core = new_core(state)
    admit(core, A_URLS + B_URLS)
    now = time.monotonic()
    session = hello(core, "w1", [], now, user).session
    bags = {}
    for _, msg in core.dispatch(now):
        assert isinstance(msg, Bag)
        bags[msg.domain] = msg
    assert set(bags) == {"a.test", "b.test"}
    return core, session, bags


def claim(bag: Bag, session: bytes, sent: list[bytes] | None = None) -> HeldBag:
    return HeldBag(bag.lease, bag.epoch, bag.domain, session, sent or [])


def dispatched(core: MasterCore, now: float) -> dict[str, str]:
    """Domain -> the node it went to."""
    out = {}
    for identity, msg in core.dispatch(now):
        assert isinstance(msg, Bag)
        out[msg.domain] = identity.decode()
    return out


def test_the_holder_s_claim_is_adopted_and_its_unstored_results_asked_again(
    tmp_path: Path,
) -> None:
    old, session, bags = first_run(tmp_path)
    a = bags["a.test"]
    stored = old.on_results(results(a, "w1", session, [page(A_URLS[0])]), time.monotonic())
    old.on_durable(stored)
    old.frontier.db.commit()  # A_URLS[0] is stored; A_URLS[1] was sent but died with the run
    core = new_core(tmp_path)
    now = time.monotonic()
    assert not core.held_all  # only the domains of recorded leases wait
    assert dispatched(core, now) == {}  # both are w1's until it claims or they expire
    sent = [a.fps[0], a.fps[1]]
    welcome = hello(core, "w1", [claim(a, session, sent)], now)
    assert welcome.adopted == [a.lease] and welcome.resend == [[a.fps[1]]]
    assert core.stats["leases_adopted"] == 1
    assert dispatched(core, now) == {}  # a.test is w1's again, b.test still waits
    # Results of the adopted lease come under the new session, and close it.
    pages = [page(u) for u in A_URLS[1:]]
    records = core.on_results(results(a, "w1", welcome.session, pages), now)
    assert [r.url for r in records] == A_URLS[1:]
    assert core.refused == {}
    core.on_results(results(a, "w1", session, [page(A_URLS[1])]), now)
    assert core.refused["session"] == 1  # the old registration's token no longer counts
    # b.test was not claimed: held until its lease could have expired.
    late = now + TTL + 2.0
    core.expire(late)
    assert core.stats["leases_unclaimed"] == 1
    hello(core, "w2", [], late)
    assert dispatched(core, late)["b.test"] == "w2"
    old.frontier.db.close()
    core.frontier.db.close()


def test_forged_claims_are_refused_and_counted(tmp_path: Path) -> None:
    old, session, bags = first_run(tmp_path, user="KEY-1")
    a = bags["a.test"]
    core = new_core(tmp_path)
    now = time.monotonic()
    forged = [
        ("w2", claim(a, session), "KEY-1"),  # another node name, the right token
        ("w1", claim(a, b"x" * 16), "KEY-1"),  # the right name, a guessed token
        ("w1", claim(a, session), "KEY-2"),  # name and token, another CURVE key
        ("w1", HeldBag(a.lease, a.epoch + 1, a.domain, session), "KEY-1"),
        ("w1", HeldBag("no-such-lease", 1, a.domain, session), "KEY-1"),
    ]
    for node, held, user in forged:
        welcome = hello(core, node, [held], now, user)
        assert welcome.adopted == []
    assert core.stats["adoptions_refused"] == len(forged)
    assert core.adoption.refused == {"node": 1, "session": 1, "key": 1, "epoch": 1, "unknown": 1}
    assert core.stats["leases_adopted"] == 0
    # The forgers got nothing: the lease still waits for its holder.
    assert dispatched(core, now) == {}
    assert hello(core, "w1", [claim(a, session)], now, "KEY-1").adopted == [a.lease]
    old.frontier.db.close()
    core.frontier.db.close()


def test_a_repeated_hello_keeps_the_session_and_the_leases(tmp_path: Path) -> None:
    old, session, bags = first_run(tmp_path)
    a, b = bags["a.test"], bags["b.test"]
    core = new_core(tmp_path)
    now = time.monotonic()
    first = hello(core, "w1", [claim(a, session), claim(b, session)], now)
    assert sorted(first.adopted) == sorted([a.lease, b.lease])
    # Hellos queued while the master was away arrive after the first one;
    # one sent before a bag was dropped lists less: no lease is taken back
    # behind the worker's back, the Welcome says which it may go on with.
    again = hello(core, "w1", [claim(a, session)], now)
    assert again.session == first.session
    assert sorted(again.adopted) == sorted([a.lease, b.lease])
    assert core.leases.current(b.lease, b.epoch) is not None
    assert core.stats["leases_reclaimed"] == 0
    old.frontier.db.close()
    core.frontier.db.close()


def test_with_adoption_off_every_domain_waits(tmp_path: Path) -> None:
    old, session, bags = first_run(tmp_path)
    core = new_core(tmp_path, adopt=False)
    now = time.monotonic()
    assert core.held_all and core.hold_until > now
    welcome = hello(core, "w1", [claim(bags["a.test"], session)], now)
    assert welcome.adopted == []
    admit(core, ["http://c.test/"])
    assert dispatched(core, now) == {}  # even a domain no lease had
    old.frontier.db.close()
    core.frontier.db.close()
    # A run after one with adoption off cannot know its leases: all wait too.
    third = new_core(tmp_path)
    assert third.held_all
    third.frontier.db.close()


def test_a_domain_without_a_recorded_lease_dispatches_at_once(tmp_path: Path) -> None:
    old, _session, _bags = first_run(tmp_path)
    admit(old, ["http://c.test/"])
    core = new_core(tmp_path)
    now = time.monotonic()
    hello(core, "w2", [], now)
    assert dispatched(core, now) == {"c.test": "w2"}
    old.frontier.db.close()
    core.frontier.db.close()


def test_held_bags_travel_in_the_hello() -> None:
    held = HeldBag("abc-1", 3, "a.test", b"s" * 16, [b"f" * 16])
    msg = Hello(node="w1", capacity=2, held=[held])
    assert decode(encode(msg)) == msg
    welcome = Welcome("w1", 0.5, 2.0, b"s" * 16, adopted=["abc-1"], resend=[[b"f" * 16]])
    assert decode(encode(welcome)) == welcome


def test_the_claim_window_starts_when_the_master_reads_its_socket(tmp_path: Path) -> None:
    old, session, bags = first_run(tmp_path)
    a = bags["a.test"]
    core = new_core(tmp_path)
    started = time.monotonic()
    # The start took long (a loaded machine, a stalled process): by the
    # clock the window is over before anything was read.
    reading = started + TTL + 2 * core.config.master.claim_window
    core.listening(reading)
    core.expire(reading + core.config.master.claim_window - 0.1)
    assert core.stats["leases_unclaimed"] == 0
    welcome = hello(core, "w1", [claim(a, session)], reading + 0.5)
    assert welcome.adopted == [a.lease]
    core.expire(reading + core.config.master.claim_window + 0.1)  # the window is over: b.test goes
    assert core.stats["leases_unclaimed"] == 1
    old.frontier.db.close()
    core.frontier.db.close()


def test_an_ended_lease_s_unstored_urls_wait_for_its_holder_s_claim(tmp_path: Path) -> None:
    """w1's bag of a.test ended, its results not stored, and a.test went to
    w2 in a newer bag; then the crash. w2 says hello first: its finished bag
    closes at once, but a.test is not leased again before w1 could claim
    its bag and send those results again (they were fetched twice so)."""
    old, session, bags = first_run(tmp_path)
    a = bags["a.test"]
    now = time.monotonic()
    old.on_results(results(a, "w1", session, [page(u) for u in A_URLS]), now)
    old.on_control(b"w1", BagDone("w1", a.lease, a.epoch, returned=[]), now)
    admit(old, [f"http://a.test/more/{i}" for i in range(3)])
    w2 = hello(old, "w2", [], now).session
    [newer] = [m for _, m in old.dispatch(now + 1.0) if isinstance(m, Bag) and m.domain == "a.test"]
    old.frontier.db.commit()  # the crash: A_URLS' results were never stored
    core = new_core(tmp_path)
    now = time.monotonic()
    done = HeldBag(newer.lease, newer.epoch, "a.test", w2, [], done=True)
    assert hello(core, "w2", [done], now).adopted == [newer.lease]
    assert "a.test" not in dispatched(core, now)
    finished = HeldBag(a.lease, a.epoch, "a.test", session, list(a.fps), done=True)
    welcome = hello(core, "w1", [finished], now)
    assert welcome.resend == [list(a.fps)]
    records = core.on_results(results(a, "w1", welcome.session, [page(u) for u in A_URLS]), now)
    assert sorted(r.url for r in records) == sorted(A_URLS)
    core.expire(now + core.adoption.until)  # the claim window is over
    core.on_durable(records)
    leased = [m for _, m in core.dispatch(core.adoption.until + 1.0) if isinstance(m, Bag)]
    assert not {u for m in leased for u in m.urls} & set(A_URLS)
    old.frontier.db.close()
    core.frontier.db.close()
