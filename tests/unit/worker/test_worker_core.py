"""WorkerCore's decisions by example (no sockets, no event loop): hello and
heartbeats, fencing by unanswered heartbeats, what each message of the
master does to the bags, and stale or forged messages that must change
nothing."""

from __future__ import annotations

import pytest
from support.worker_core_helpers import (
    CAPACITY,
    LOAD,
    SESSION,
    T0,
    TTL,
    a_bag,
    a_page,
    done_of,
    new_core,
    registered,
    run_bag,
    sends,
    sent_page,
    start,
    welcome,
)

from nadird.protocol.messages import (
    BagDone,
    Bye,
    Credit,
    Heartbeat,
    Hello,
    Message,
    Pong,
    Refused,
    Reset,
    Results,
    Shutdown,
)
from nadird.worker.core import (
    FENCE_SHARE,
    Cancel,
    Exit,
    Load,
    Resend,
    Send,
    Start,
    Welcomed,
    WorkerCore,
)
from nadird.worker.held import KEEP_PERIODS


def no_load() -> Load:
    raise AssertionError("the load is read only for a heartbeat")


def beat(core: WorkerCore, now: float) -> Heartbeat:
    [msg] = sends(core.tick(now, lambda: LOAD))
    assert isinstance(msg, Heartbeat)
    return msg


# --- registration and heartbeats --------------------------------------------


def test_until_welcomed_each_tick_says_hello_and_reads_no_load() -> None:
    core = new_core()
    hello = core.say_hello()
    assert (hello.node, hello.capacity, hello.pid, hello.held) == ("w1", CAPACITY, 42, [])
    for i in range(3):
        assert sends(core.tick(T0 + i, no_load)) == [hello]
    assert not core.registered and core.seq == 0


def test_a_welcome_registers_takes_the_masters_settings_and_offers_every_bag() -> None:
    core = new_core()
    actions = core.on_message(welcome(), T0 + 5)
    assert actions == [Welcomed(T0 + 5), Send(Credit(node="w1", bags=CAPACITY))]
    assert core.registered and core.session == SESSION
    assert (core.heartbeat_interval, core.lease_ttl, core.last_ack) == (1.0, TTL, T0 + 5)


def test_a_bag_is_started_and_named_in_the_next_heartbeat() -> None:
    core = registered()
    bag = a_bag()
    assert core.on_message(bag, T0) == [Start(bag)]
    start(core, [Start(bag)])
    msg = beat(core, T0 + 1)
    assert (msg.leases, msg.inflight, msg.seq) == (["L1"], 1, 1)
    assert (msg.cpu_percent, msg.rss_mb, msg.proxies) == (12.5, 80.0, 3)
    assert beat(core, T0 + 2).seq == 2


def test_a_bag_that_ends_leaves_unless_it_was_resumed_under_another_run() -> None:
    core = registered()
    bag = a_bag()
    old = run_bag(core, bag)
    new = run_bag(core, bag)  # resumed under the same lease
    core.ended(bag, old)
    assert core.bags["L1"][1] is new
    core.ended(bag, new)
    assert core.bags == {}


def test_a_finished_bag_is_reported_then_more_is_asked_for() -> None:
    core = registered()
    bag = a_bag()
    run = run_bag(core, bag)
    core.ended(bag, run)
    done = done_of(bag)
    assert sends(core.finished(bag, run, done, T0)) == [done, Credit(node="w1", bags=1)]
    assert core.kept["L1"].done is done  # for a master that dies before storing


def test_a_stopping_worker_reports_its_bag_but_asks_for_no_other() -> None:
    core = registered()
    bag = a_bag()
    run = run_bag(core, bag)
    run.stop()
    core.ended(bag, run)
    assert sends(core.finished(bag, run, done_of(bag), T0)) == [done_of(bag)]


def test_a_dropped_bag_reports_nothing_when_its_task_ends() -> None:
    core = registered()
    bag = a_bag()
    run = run_bag(core, bag)
    core.drop_bags("test", T0)
    core.ended(bag, run)
    assert core.finished(bag, run, done_of(bag), T0) == []


# --- fencing ---------------------------------------------------------------


def test_a_pong_renews_the_leases_as_of_its_heartbeats_send_time() -> None:
    core = registered()
    first = beat(core, T0 + 1).seq
    second = beat(core, T0 + 2).seq
    core.on_message(Pong(seq=second), T0 + 9)
    assert core.last_ack == T0 + 2  # sent then; read by the master no earlier
    assert core.heartbeats == {}  # the older one is passed over
    core.on_message(Pong(seq=first), T0 + 9)  # a late answer to it renews nothing
    assert core.last_ack == T0 + 2


@pytest.mark.parametrize(
    "seq",
    [0, 7, -1, 2**31],
    ids=["never-sent-0", "not-yet-sent", "negative", "huge"],
)
def test_a_pong_for_no_heartbeat_awaited_renews_nothing(seq: int) -> None:
    core = registered()
    beat(core, T0 + 1)
    assert core.on_message(Pong(seq=seq), T0 + 2) == []
    assert core.last_ack == T0 and core.heartbeats == {1: T0 + 1}


def test_a_replayed_pong_renews_nothing_twice() -> None:
    core = registered()
    beat(core, T0 + 1)
    core.on_message(Pong(seq=1), T0 + 2)
    beat(core, T0 + 20)
    core.on_message(Pong(seq=1), T0 + 21)  # the same answer again
    assert core.last_ack == T0 + 1 and core.heartbeats == {2: T0 + 20}


def test_fenced_once_most_of_a_lease_period_passed_without_an_answer() -> None:
    core = registered()
    edge = T0 + TTL * FENCE_SHARE
    assert not core.fenced(edge)
    assert core.fenced(edge + 0.01)


def test_a_fenced_worker_drops_its_bags_keeps_them_and_says_hello() -> None:
    core = registered()
    bag = a_bag()
    run = run_bag(core, bag)
    sent_page(core, "L1", 0)
    later = T0 + TTL  # heartbeats went unanswered
    actions = core.tick(later, no_load)
    assert actions[0] == Cancel("L1")
    [hello] = sends(actions)
    assert isinstance(hello, Hello)
    [held] = hello.held
    assert (held.lease, held.session, held.sent, held.done) == ("L1", SESSION, [bag.fps[0]], False)
    assert run.dropped and core.bags == {} and not core.registered
    assert core.kept["L1"].run is run


def test_an_answered_worker_keeps_its_bags_past_the_first_lease_period() -> None:
    core = registered()
    run_bag(core, a_bag())
    now = T0
    for _ in range(int(2 * TTL)):
        now += 1.0
        core.on_message(Pong(seq=beat(core, now).seq), now + 0.1)
    assert not core.fenced(now) and list(core.bags) == ["L1"]


def test_kept_bags_are_forgotten_when_no_master_could_still_adopt_them() -> None:
    core = registered()
    finished, dropped = a_bag("F", "f.test"), a_bag("D", "d.test")
    run = run_bag(core, finished)
    core.ended(finished, run)
    core.finished(finished, run, done_of(finished), T0)
    run_bag(core, dropped)
    core.on_message(Reset(reason="unknown worker; say hello"), T0)
    core.on_message(welcome(adopted=[], resend=[]), T0)
    assert core.kept == {}  # a Welcome settles them all
    # Without one: a dropped bag after KEEP_PERIODS lease periods; a finished
    # one once a master answered that long after its end without settling it
    # (not while none answers: a master that took long to restart needs it).
    core = registered()
    run = run_bag(core, finished)
    core.ended(finished, run)
    core.finished(finished, run, done_of(finished), T0)
    run_bag(core, dropped)
    core.drop_bags("test", T0 + 10)
    core.tick(T0 + 10 + TTL * KEEP_PERIODS + 1, no_load)
    assert set(core.kept) == {"F"}
    core.last_ack = T0 + TTL * KEEP_PERIODS - 1
    core.tick(core.last_ack + 5, no_load)
    assert set(core.kept) == {"F"}
    core.last_ack = T0 + TTL * KEEP_PERIODS + 1
    core.tick(core.last_ack + 5, no_load)
    assert core.kept == {}


def test_a_finished_bag_is_kept_until_the_master_says_its_results_are_stored() -> None:
    """However long the master takes to store them (a slow store, a loaded
    machine): forgotten sooner, a crash then lost its results and its URLs
    were fetched again."""
    core = registered()
    bag = a_bag("F", "f.test")
    run = run_bag(core, bag)
    core.ended(bag, run)
    core.finished(bag, run, done_of(bag), T0)
    now = T0
    for _ in range(20):  # answered, but not settled, for 20 s
        now += 1.0
        msg = beat(core, now)
        assert msg.finished == ["F"]
        core.on_message(Pong(seq=msg.seq), now + 0.1)
    assert "F" in core.kept
    core.on_message(Pong(seq=beat(core, now + 1).seq, settled=["F", "unknown"]), now + 1.1)
    assert core.kept == {} and beat(core, now + 2).finished == []


def test_a_dropped_bag_is_not_settled_by_a_pong() -> None:
    core = registered()
    run_bag(core, a_bag("D", "d.test"))
    core.drop_bags("test", T0)
    core.on_message(Pong(seq=0, settled=["D"]), T0 + 1)
    assert "D" in core.kept


def test_an_adopted_finished_bag_is_kept_again_until_the_new_master_settles_it() -> None:
    core = registered()
    bag = a_bag("F", "f.test")
    run = run_bag(core, bag)
    page = sent_page(core, "F", 0)
    core.ended(bag, run)
    core.finished(bag, run, done_of(bag), T0)
    core.on_message(Reset(reason="unknown worker; say hello"), T0 + 1)
    actions = core.on_message(welcome(session=b"t" * 16, adopted=["F"], resend=[[page.fp]]), T0 + 1)
    assert done_of(bag) in sends(actions)
    assert beat(core, T0 + 2).finished == ["F"]


# --- what the master says ---------------------------------------------------


def test_refused_unregisters_and_the_next_ticks_ask_again() -> None:
    core = registered()
    run_bag(core, a_bag())
    assert core.on_message(Refused(reason="node id in use"), T0) == []
    assert not core.registered and list(core.bags) == ["L1"]
    [hello] = sends(core.tick(T0 + 1, no_load))
    assert isinstance(hello, Hello) and [h.lease for h in hello.held] == ["L1"]


def test_reset_drops_the_bags_keeps_them_and_says_hello_at_once() -> None:
    core = registered()
    bag = a_bag()
    run = run_bag(core, bag)
    actions = core.on_message(Reset(reason="unknown worker; say hello"), T0 + 3)
    assert actions[0] == Cancel("L1")
    [hello] = sends(actions)
    assert isinstance(hello, Hello) and [h.lease for h in hello.held] == ["L1"]
    assert run.dropped and not core.registered and core.kept["L1"].at == T0 + 3


@pytest.mark.parametrize("exit_when_done", [False, True])
@pytest.mark.parametrize("done", [False, True])
def test_a_master_shutting_down_ends_the_bags_for_good(exit_when_done: bool, done: bool) -> None:
    core = new_core(exit_when_done=exit_when_done)
    core.on_message(welcome(), T0)
    run = run_bag(core, a_bag())
    actions = core.on_message(Shutdown(reason="stopping", done=done), T0)
    exits = [Exit()] if done and exit_when_done else []
    assert actions == [Cancel("L1"), *exits]
    assert run.dropped and core.kept == {}  # no later run adopts them
    assert not core.registered  # hello again at the next heartbeat
    assert sends(core.tick(T0 + 1, no_load)) == [core.say_hello()]


def test_a_welcome_drops_the_running_bags_it_does_not_list() -> None:
    core = registered()
    run = run_bag(core, a_bag())
    actions = core.on_message(welcome(session=b"n" * 16), T0 + 1)
    assert actions[0] == Cancel("L1")
    assert sends(actions) == [Credit(node="w1", bags=CAPACITY)]
    assert run.dropped and core.bags == {} and core.kept == {}


def test_an_adopting_welcome_resends_what_it_asks_for_and_resumes_the_rest() -> None:
    core = registered()
    bag = a_bag(n=3)
    run_bag(core, bag)
    first = sent_page(core, "L1", 0)
    sent_page(core, "L1", 1)
    core.on_message(Reset(reason="unknown worker; say hello"), T0 + 1)
    new = b"n" * 16
    # Stored: the second result; asked again: the first; never sent: the third.
    asked = welcome(session=new, adopted=["L1"], resend=[[bag.fps[0], bag.fps[2]]])
    actions = core.on_message(asked, T0 + 2)
    assert Resend("L1", 1, "default", new, [first]) in actions
    [resumed] = start(core, actions)
    assert resumed.urls == bag.urls[2:] and resumed.fps == bag.fps[2:]
    assert set(core.bags["L1"][1].sent) == set(bag.fps[:2])  # kept for another crash
    assert core.bags["L1"][1].token == new == core.session
    assert sends(actions)[-1] == Credit(node="w1", bags=CAPACITY - 1)


def test_an_adopted_finished_bag_sends_its_bag_done_again() -> None:
    core = registered()
    bag = a_bag()
    run = run_bag(core, bag)
    page = sent_page(core, "L1", 0)
    core.ended(bag, run)
    done = done_of(bag, returned=bag.fps[1:])
    core.finished(bag, run, done, T0)
    [hello] = sends(core.on_message(Reset(reason="restarted"), T0 + 1))
    assert isinstance(hello, Hello) and hello.held[0].done
    actions = core.on_message(welcome(adopted=["L1"], resend=[[page.fp]]), T0 + 2)
    assert Resend("L1", 1, "default", SESSION, [page]) in actions
    assert not any(isinstance(a, Start) for a in actions)
    assert sends(actions) == [done, Credit(node="w1", bags=CAPACITY)]


def test_a_welcome_adopting_leases_never_held_starts_nothing() -> None:
    core = new_core()
    forged = welcome(adopted=["L9", "L1"], resend=[[b"f" * 16], []])
    actions = core.on_message(forged, T0)
    assert not any(isinstance(a, Start | Resend | Cancel) for a in actions)
    assert sends(actions) == [Credit(node="w1", bags=CAPACITY)] and core.bags == {}


def test_each_message_only_a_worker_sends_is_dropped_and_changes_nothing() -> None:
    core = registered()
    run = run_bag(core, a_bag())
    beat(core, T0 + 1)
    before = (core.registered, core.session, core.last_ack, dict(core.heartbeats), core.seq)
    fp = b"f" * 16
    wrong: list[Message] = [
        Hello(node="w1", capacity=1),
        Credit(node="w1", bags=100),
        Heartbeat(node="w1", leases=["L1"], seq=1),
        BagDone(node="w1", lease="L1", epoch=1, returned=[fp]),
        Bye(node="w1"),
        Results(node="w1", lease="L1", epoch=1, job="default", pages=[a_page("http://a.test/0")]),
    ]
    for msg in wrong:
        assert core.on_message(msg, T0 + 2) == []
    after = (core.registered, core.session, core.last_ack, dict(core.heartbeats), core.seq)
    assert after == before and core.bags["L1"][1] is run and not run.dropped


def test_every_bag_of_a_reset_is_dropped_whatever_its_state() -> None:
    core = registered()
    runs = [run_bag(core, a_bag(f"L{i}", f"d{i}.test")) for i in range(CAPACITY)]
    runs[0].stop()
    actions = core.on_message(Reset(reason="x"), T0)
    assert [a for a in actions if isinstance(a, Cancel)] == [Cancel(f"L{i}") for i in range(4)]
    assert all(r.dropped for r in runs)


# --- what a forged or repeated message of the master must not do -----------


def test_a_bag_whose_lease_already_runs_is_not_started_twice() -> None:
    core = registered()
    bag = a_bag()
    start(core, core.on_message(bag, T0))
    assert core.on_message(bag, T0 + 1) == []
    assert list(core.bags) == ["L1"]


def test_a_welcome_repeating_the_session_held_registers_nothing_again() -> None:
    core = registered()
    start(core, core.on_message(a_bag(), T0))
    # The answer to a Hello said twice while the master was away.
    assert core.on_message(welcome(), T0 + 1) == []
    assert list(core.bags) == ["L1"] and core.last_ack == T0


def test_a_welcome_for_another_node_is_dropped() -> None:
    core = new_core()
    assert core.on_message(welcome(node="w2"), T0) == []
    assert not core.registered and core.session == b""


@pytest.mark.parametrize(("interval", "ttl"), [(0.0, TTL), (-1.0, TTL), (1.0, 0.0)])
def test_a_welcome_with_periods_not_above_zero_is_dropped(interval: float, ttl: float) -> None:
    core = new_core()
    msg = welcome()
    forged = type(msg)(node="w1", heartbeat_interval=interval, lease_ttl=ttl, session=SESSION)
    assert core.on_message(forged, T0) == []
    assert not core.registered and core.heartbeat_interval > 0
