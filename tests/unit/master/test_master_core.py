"""MasterCore's decisions by example (no sockets, a temporary FrontierDB):
routing by group and capability, duplicate worker names, late results, and
URLs a server throttled (429/503), workers judged as of what was read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.core_helpers import A_URLS, HEARTBEAT, T0, TTL, admit, bags, make_core, page, register
from support.core_helpers import results as results_of

from nadird.common.urls import fingerprint
from nadird.job.spec import Job
from nadird.master.core import CATCH_UP_PERIODS, MasterCore
from nadird.master.leasing.dispatch import NO_WORKER_RETRY
from nadird.protocol.messages import Bag, BagDone, Credit, Hello, Refused, Reset, Welcome

C_URLS = [f"http://c.test/{i}" for i in range(2)]


@pytest.fixture
def core(tmp_path: Path) -> Iterator[MasterCore]:
    yield from make_core(tmp_path)


def handed(core: MasterCore, now: float = T0) -> dict[str, tuple[bytes, Bag]]:
    """Dispatch; (worker identity, bag) by domain."""
    out = {}
    for identity, msg in core.dispatch(now):
        assert isinstance(msg, Bag)
        out[msg.domain] = (identity, msg)
    return out


# --- routing -------------------------------------------------------------------


def test_a_jobs_bags_go_only_to_workers_of_its_group(tmp_path: Path) -> None:
    for core in make_core(tmp_path, jobs={"eu": Job(name="eu", group="eu")}):
        admit(core, C_URLS, job="eu")
        register(core, "w-default")
        register(core, "w-eu", group="eu")
        out = handed(core)
        assert out["c.test"][0] == b"w-eu"
        # The default job names no group: any worker takes it.
        assert {out["a.test"][0], out["b.test"][0]} <= {b"w-default", b"w-eu"}


def test_a_job_needing_a_capability_waits_for_a_worker_that_has_it(tmp_path: Path) -> None:
    js = Job(name="js", requires=["javascript"])
    for core in make_core(tmp_path, jobs={"js": js}):
        admit(core, C_URLS, job="js")
        register(core, "plain", capabilities=["pdf"])
        assert "c.test" not in handed(core)
        assert core.stats["no_capable_worker"] == 1
        register(core, "browser", capabilities=["javascript", "pdf"])
        # The domain rests a little before it is tried again.
        assert "c.test" not in handed(core, T0 + NO_WORKER_RETRY - 0.1)
        identity, bag = handed(core, T0 + NO_WORKER_RETRY)["c.test"]
        assert identity == b"browser" and sorted(bag.urls) == C_URLS


def test_a_worker_gets_no_more_bags_than_its_credits(core: MasterCore) -> None:
    identity = b"w1"
    core.on_control(identity, Hello(node="w1", capacity=4), T0)
    core.on_control(identity, Credit(node="w1", bags=1), T0)
    assert len(core.dispatch(T0)) == 1  # two domains ready, one credit
    core.on_control(identity, Credit(node="w1", bags=99), T0)
    node = core.nodes.get("w1")
    assert node is not None and node.credits == 4  # never above its capacity


# --- duplicate names ------------------------------------------------------------


def test_a_second_live_worker_with_the_same_name_is_refused(core: MasterCore) -> None:
    register(core, "w1")
    bag = bags(core)["a.test"]
    [(to, answer)] = core.on_control(b"imposter", Hello(node="w1", capacity=4), T0 + 0.1)
    assert to == b"imposter" and isinstance(answer, Refused) and "in use" in answer.reason
    assert core.stats["refused_workers"] == 1
    # The first worker keeps its name, its identity and its lease.
    node = core.nodes.get("w1")
    assert node is not None and node.identity == b"w1"
    assert core.leases.current(bag.lease, bag.epoch) is not None
    # The refused peer is nobody: what it sends has no effect.
    [(_, reset)] = core.on_control(b"imposter", Credit(node="w1", bags=4), T0 + 0.2)
    assert isinstance(reset, Reset) and core.stats["dropped_messages"] == 1


def test_a_restarted_worker_takes_its_name_back_while_it_would_still_count_as_live(
    core: MasterCore,
) -> None:
    register(core, "w1", user="key-1")
    bag = bags(core)["a.test"]
    core.connected = lambda identity: identity != b"w1"  # the old process's socket closed
    restarted = Hello(node="w1", capacity=4, pid=2)
    [(to, answer)] = core.on_control(b"w1-again", restarted, T0 + 0.1, "key-1")
    assert to == b"w1-again" and isinstance(answer, Welcome)
    node = core.nodes.get("w1")
    assert node is not None and node.identity == b"w1-again" and len(core.nodes) == 1
    assert core.leases.current(bag.lease, bag.epoch) is None  # its old process's bags are back
    assert core.stats["refused_workers"] == 0


def test_a_closed_connection_does_not_give_the_name_to_another_key_or_host(
    core: MasterCore,
) -> None:
    core.on_control(b"w1", Hello(node="w1", capacity=4, host="a"), T0, "key-1")
    core.connected = lambda identity: identity != b"w1"
    for user, host in (("key-2", "a"), ("key-1", "b")):
        hello = Hello(node="w1", capacity=4, pid=2, host=host)
        [(_, answer)] = core.on_control(b"other", hello, T0 + 0.1, user)
        assert isinstance(answer, Refused)
    # Nor does the same key take it from a process whose connection is open.
    core.connected = lambda identity: True
    same = Hello(node="w1", capacity=4, pid=2, host="a")
    [(_, answer)] = core.on_control(b"second", same, T0 + 0.1, "key-1")
    assert isinstance(answer, Refused) and core.stats["refused_workers"] == 3


def test_a_name_fallen_silent_can_be_taken_and_its_bags_come_back(core: MasterCore) -> None:
    register(core, "w1")
    bag = bags(core)["a.test"]
    silent = T0 + 2 * HEARTBEAT + 0.01
    [(_, answer)] = core.on_control(b"newcomer", Hello(node="w1", capacity=4), silent)
    assert isinstance(answer, Welcome)
    node = core.nodes.get("w1")
    assert node is not None and node.identity == b"newcomer" and len(core.nodes) == 1
    assert core.leases.current(bag.lease, bag.epoch) is None
    assert core.stats["leases_reclaimed"] == 2  # both of its bags (a.test, b.test)


# --- late results ---------------------------------------------------------------


def test_a_late_result_settles_its_url_for_good(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    expired = T0 + TTL + 0.1
    core.expire(expired)
    queued = core.frontier.queued
    [record] = core.on_results(results_of(bag, "w1", session, [page(A_URLS[0])]), expired)
    core.on_durable([record])
    assert core.frontier.queued == queued - 1 == core.frontier.db.total_rows()
    assert core.stats["late_results"] == 1
    register(core, "w2", now=expired)
    again = bags(core, expired + TTL)["a.test"]
    assert sorted(again.urls) == A_URLS[1:]  # not fetched twice


def test_a_late_transient_failure_leaves_its_url_queued(core: MasterCore) -> None:
    session = register(core, "w1")
    bag = bags(core)["a.test"]
    expired = T0 + TTL + 0.1
    core.expire(expired)
    failed = page(A_URLS[0], status=0, error="timeout: read")
    assert core.on_results(results_of(bag, "w1", session, [failed]), expired) == []
    assert core.stats["retries"] == 0 and core.stats["dead_letters"] == 0
    register(core, "w2", now=expired)
    assert sorted(bags(core, expired + TTL)["a.test"].urls) == A_URLS


# --- throttling -----------------------------------------------------------------


def throttle(core: MasterCore, bag: Bag, url: str, wait: float, now: float) -> None:
    """The worker's BagDone after a 429 on `url`: nothing else fetched."""
    throttled = [fingerprint(url)]
    done = BagDone("w1", bag.lease, bag.epoch, returned=bag.fps, wait=wait, throttled=throttled)
    core.on_control(b"w1", done, now)


def test_a_throttled_domain_rests_and_its_url_waits_for_a_retry(core: MasterCore) -> None:
    register(core, "w1")
    bag = bags(core)["a.test"]
    throttle(core, bag, A_URLS[0], wait=5.0, now=T0)
    assert core.leases.current(bag.lease, bag.epoch) is None
    assert core.stats["retries"] == 1 and core.frontier.queued == 4
    assert "a.test" not in bags(core, T0 + 4.9)
    # Rested; the throttled URL itself is held back for its retry delay.
    assert sorted(bags(core, T0 + 5.0)["a.test"].urls) == A_URLS[1:]


def test_a_throttled_url_counts_tries_and_is_dead_lettered_when_they_run_out(
    tmp_path: Path,
) -> None:
    for core in make_core(tmp_path, jobs={"default": Job(max_retries=1)}):
        register(core, "w1")
        bag = bags(core)["a.test"]
        throttle(core, bag, A_URLS[0], wait=0.0, now=T0)
        again = bags(core, T0 + 0.1)["a.test"]
        lease = core.leases.current(again.lease, again.epoch)
        assert lease is not None and lease.pending[fingerprint(A_URLS[0])].attempts == 1
        throttle(core, again, A_URLS[0], wait=0.0, now=T0 + 0.2)
        [letter] = core.frontier.db.dead_letters()
        assert (letter.url, letter.attempts) == (A_URLS[0], 2)
        assert letter.error == "http: throttled (429/503)"
        assert core.stats["dead_letters"] == 1 and core.frontier.queued == 3


def test_a_throttled_fingerprint_outside_the_lease_is_ignored(core: MasterCore) -> None:
    register(core, "w1")
    out = bags(core)
    bag, other = out["a.test"], out["b.test"]
    done = BagDone(
        node="w1", lease=bag.lease, epoch=bag.epoch, returned=other.fps, throttled=other.fps
    )
    core.on_control(b"w1", done, T0)
    assert core.stats["retries"] == 0
    lease = core.leases.current(other.lease, other.epoch)
    assert lease is not None and set(lease.pending) == set(other.fps)


# --- judged as of what was read ---------------------------------------------------


def test_workers_are_judged_as_of_the_last_read_of_their_messages(core: MasterCore) -> None:
    register(core, "w1")
    bag = bags(core)["a.test"]
    later = T0 + TTL + 0.1  # by the clock: silent, its lease expired
    core.expire(later, heard=T0 + 0.1)  # but its messages since are unread
    assert core.nodes.get("w1") is not None
    assert core.leases.current(bag.lease, bag.epoch) is not None
    core.expire(later, heard=later)  # read up to now: it is silent
    assert core.nodes.get("w1") is None
    assert core.leases.current(bag.lease, bag.epoch) is None


def test_a_socket_never_read_to_the_end_delays_judgement_only_so_long(
    core: MasterCore,
) -> None:
    register(core, "w1")
    bag = bags(core)["a.test"]
    far = T0 + (CATCH_UP_PERIODS + 1.1) * TTL
    core.expire(far, heard=T0)
    assert core.nodes.get("w1") is None
    assert core.leases.current(bag.lease, bag.epoch) is None


# --- a stalled holder -------------------------------------------------------------


def test_an_expired_lease_leaves_its_domain_resting_a_delay(tmp_path: Path) -> None:
    # The stalled holder may have sent a request just before its fence, a
    # tenth of the lease period before expiry: shorter than this delay.
    for core in make_core(tmp_path, jobs={"default": Job(delay=TTL)}):
        register(core, "w1")
        assert "a.test" in bags(core)
        expired = T0 + TTL + 0.1
        core.expire(expired)
        assert core.stats["leases_expired"] == 2
        register(core, "w2", now=expired)
        assert bags(core, expired + TTL - 0.1) == {}
        assert set(bags(core, expired + TTL)) == {"a.test", "b.test"}


def test_a_worker_silent_past_node_timeout_keeps_its_leases_until_they_expire(
    tmp_path: Path,
) -> None:
    for core in make_core(tmp_path, {"default": Job(delay=0.0)}, node_timeout=TTL / 4):
        register(core, "w1")
        bag = bags(core)["a.test"]
        silent = T0 + TTL / 2
        core.expire(silent)
        assert core.nodes.get("w1") is None  # marked offline...
        # ...but it may only be stalled: it crawls on until its fence.
        assert core.leases.current(bag.lease, bag.epoch) is not None
        register(core, "w2", now=silent)
        assert bags(core, silent) == {}
        expired = T0 + TTL + 0.1
        core.expire(expired)
        assert core.leases.current(bag.lease, bag.epoch) is None
        register(core, "w2", now=expired)
        assert "a.test" in bags(core, expired)
