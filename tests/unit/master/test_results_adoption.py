"""Results of a lease of the previous master run, before (or without) their
holder's claim (master/leasing/adoption.py): taken when they prove the
holder, refused otherwise; after the claim, results sent before the restart
still count for URLs not answered since."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from support.core_helpers import A_URLS, page, results
from test_lease_adoption import TTL, claim, dispatched, first_run, hello, new_core


def test_results_before_the_claim_are_taken_and_not_asked_again(tmp_path: Path) -> None:
    old, session, bags = first_run(tmp_path)
    a = bags["a.test"]
    core = new_core(tmp_path)
    now = time.monotonic()
    records = core.on_results(results(a, "w1", session, [page(A_URLS[0])]), now)
    assert [r.url for r in records] == [A_URLS[0]] and core.refused == {}
    core.on_durable(records)
    welcome = hello(core, "w1", [claim(a, session, [a.fps[0], a.fps[1]])], now)
    assert welcome.adopted == [a.lease]
    assert welcome.resend == [[a.fps[1]]]  # A_URLS[0] is stored: not asked for again
    old.frontier.db.close()
    core.frontier.db.close()


def test_results_without_the_holder_s_proof_are_refused(tmp_path: Path) -> None:
    old, session, bags = first_run(tmp_path, user="KEY-1")
    a = bags["a.test"]
    core = new_core(tmp_path)
    now = time.monotonic()
    one = [page(A_URLS[0])]
    core.on_results(results(a, "w1", b"x" * 16, one), now, "KEY-1")
    core.on_results(results(a, "w2", session, one), now, "KEY-1")
    core.on_results(results(a, "w1", session, one), now, "KEY-2")
    other_job = dataclasses.replace(results(a, "w1", session, one), job="other")
    core.on_results(other_job, now, "KEY-1")
    stray = [page("http://a.test/not-leased")]
    core.on_results(results(a, "w1", session, stray), now, "KEY-1")
    assert core.refused == {"session": 1, "other_node": 1, "key": 1, "no_lease": 1, "not_leased": 1}
    # Unclaimed, the lease's URLs are all leased again once it could have expired.
    late = now + 2 * TTL + 2.0
    core.expire(late)
    hello(core, "w2", [], late, "KEY-2")
    assert dispatched(core, late)["a.test"] == "w2"
    old.frontier.db.close()
    core.frontier.db.close()


def test_an_adopted_lease_takes_results_sent_before_the_restart_once(tmp_path: Path) -> None:
    old, session, bags = first_run(tmp_path)
    a = bags["a.test"]
    core = new_core(tmp_path)
    now = time.monotonic()
    welcome = hello(core, "w1", [claim(a, session, [a.fps[0]])], now)
    assert welcome.resend == [[a.fps[0]]]
    before = core.on_results(results(a, "w1", session, [page(A_URLS[0])]), now)
    again = core.on_results(results(a, "w1", welcome.session, [page(A_URLS[0])]), now)
    assert [r.url for r in before] == [A_URLS[0]] and again == []  # stored once
    # The old token counts only for URLs not answered since.
    core.on_results(results(a, "w1", session, [page(A_URLS[0])]), now)
    assert core.refused == {"session": 1}
    old.frontier.db.close()
    core.frontier.db.close()
