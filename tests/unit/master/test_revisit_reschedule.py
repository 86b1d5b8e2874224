"""Due times computed again when a job's revisit policy changes: on a real
frontier.db, across reopenings (a restart) and reloads, on a fake clock."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

from support.core_helpers import make_core

from nadird.common.urls import fingerprint
from nadird.config import config_from_dict
from nadird.job.spec import Job
from nadird.master.frontier.queues import Frontier
from nadird.master.revisits.scheduler import Revisits
from nadird.master.state.frontier_db import FrontierDB
from nadird.master.state.revisit_counts import group_counts, read_counts
from nadird.protocol.messages import PageResult
from nadird.revisit.parse import parse_revisit
from nadird.revisit.policy import fingerprint as policy_digest

HOUR = 3600.0
ADAPTIVE = {"adaptive": {"min": "1m", "max": "7d", "initial": "1h"}}


class Wall:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _jobs(**jobs: dict[str, Any]) -> dict[str, Job]:
    return dict(config_from_dict({"jobs": jobs}, "t.yaml").jobs)


def _open(path: Path, wall: Wall, jobs: dict[str, Job], chunk: int = 2000) -> Revisits:
    db = FrontierDB(path)
    revisits = Revisits(db.revisits, Frontier(db), jobs, wall=wall)
    revisits.rescheduler.chunk = chunk
    return revisits


def _page(url: str) -> PageResult:
    return PageResult(
        url=url, fp=fingerprint(url), final_url=url, status=200, fetched_at=0.0, depth=1
    )


def _fetch_all(revisits: Revisits, job: str, urls: list[str], wall: Wall) -> None:
    for url in urls:
        wall.now += 1.0  # fetched one after the other
        page = _page(url)
        revisits.on_page(page, job)
        revisits.settle([page.fp])


def _run(revisits: Revisits, limit: int = 100) -> int:
    """Housekeeping ticks until no job is being rescheduled; returns how many."""
    for ticks in range(1, limit + 1):
        revisits.tick(allocate_every=1.0)
        if not revisits.rescheduling:
            return ticks
    raise AssertionError("rescheduling did not end")


def _rows(revisits: Revisits, urls: list[str]) -> list[Any]:
    found = revisits.table.get_many([fingerprint(u) for u in urls])
    return [found[fingerprint(u)] for u in urls]


def _close(revisits: Revisits) -> None:
    db = revisits.frontier.db
    db.commit()
    db.close()


URLS = [f"http://shop.test/p{i}" for i in range(40)]


def test_a_restart_with_a_shorter_interval_makes_rows_due_under_it(tmp_path: Path) -> None:
    wall, path = Wall(), tmp_path / "f.db"
    revisits = _open(path, wall, _jobs(shop={"revisit": {"every": "1h"}}))
    _fetch_all(revisits, "shop", URLS, wall)
    assert not revisits.rescheduling  # its first start: taken as scheduled under it
    _close(revisits)
    wall.now += 60
    again = _open(path, wall, _jobs(shop={"revisit": {"every": "15s"}}))
    assert again.rescheduling
    _run(again)
    rows = _rows(again, URLS)
    assert all(r.next_due == r.last_fetch + 15 for r in rows)
    # All of them were fetched over 15 s ago: due now, queued by the tick's scan.
    assert again.queued == len(URLS) and all(r.queued for r in rows)
    status = again.status()
    assert (status["revisit_rescheduled"], status["revisit_rescheduled_rows"]) == (1, len(URLS))
    _close(again)
    # The same policy again (written otherwise): nothing more to do.
    third = _open(path, wall, _jobs(shop={"revisit": {"every": 15}}))
    assert not third.rescheduling


def test_a_reload_reschedules_and_a_pending_fetch_takes_the_new_policy(tmp_path: Path) -> None:
    wall = Wall()
    revisits = _open(tmp_path / "f.db", wall, _jobs(shop={"revisit": {"every": "1h"}}))
    _fetch_all(revisits, "shop", URLS, wall)
    late = _page("http://shop.test/late")  # fetched, its queue row not gone yet
    revisits.on_page(late, "shop")
    revisits.jobs = _jobs(shop={"revisit": {"every": "15s"}})  # what apply_config does
    assert revisits.policies_changed() == ["shop"]
    _run(revisits)
    revisits.settle([late.fp])
    rows = _rows(revisits, [*URLS, late.url])
    assert all(r.next_due == r.last_fetch + 15 for r in rows)


def test_chunks_are_bounded_and_a_crash_resumes_from_the_last_commit(tmp_path: Path) -> None:
    wall, path = Wall(), tmp_path / "f.db"
    other = [f"http://other.test/p{i}" for i in range(15)]
    jobs = {"shop": {"revisit": {"every": "1h"}}, "other": {"revisit": {"every": "2h"}}}
    revisits = _open(path, wall, _jobs(**jobs))
    _fetch_all(revisits, "shop", URLS, wall)
    _fetch_all(revisits, "other", other, wall)
    _close(revisits)
    changed = {**jobs, "shop": {"revisit": {"every": "15s"}}}
    again = _open(path, wall, _jobs(**changed), chunk=7)  # 55 rows: 8 chunks
    done = [again.rescheduler.tick(again.jobs, {}) for _ in range(3)]
    assert all(n <= 7 for n in done) and again.rescheduling
    again.frontier.db.commit()
    lost = again.rescheduler.tick(again.jobs, {})
    again.frontier.db._db.close()  # the process dies before its commit: rolled back
    resumed = _open(path, wall, _jobs(**changed), chunk=7)
    assert resumed.rescheduling  # the cursor was committed with its rows
    ticks = _run(resumed)
    assert 2 <= ticks <= 6  # the 5 chunks left, from the committed cursor
    assert all(r.next_due == r.last_fetch + 15 for r in _rows(resumed, URLS))
    assert all(r.next_due == r.last_fetch + 2 * HOUR for r in _rows(resumed, other))
    # The lost chunk's rows were done again, the others once.
    assert lost > 0 and resumed.rescheduler.rows_done + sum(done) == len(URLS)


def test_a_job_that_stops_revisiting_has_its_rows_parked_and_queued_ones_kept(
    tmp_path: Path,
) -> None:
    wall = Wall()
    revisits = _open(tmp_path / "f.db", wall, _jobs(shop={"revisit": {"every": "1h"}}))
    _fetch_all(revisits, "shop", URLS, wall)
    wall.now += HOUR - 20  # the first ones due: queued for their fetch
    queued = revisits.scan()
    assert 0 < queued < len(URLS)
    revisits.jobs = _jobs(shop={})
    assert revisits.policies_changed() == ["shop"]
    _run(revisits)
    rows = _rows(revisits, URLS)
    assert sum(r.queued for r in rows) == queued  # still queued, due time kept
    assert all(r.next_due is not None for r in rows if r.queued)
    assert all(r.next_due is None for r in rows if not r.queued)
    wall.now += 10 * HOUR
    assert revisits.scan() == 0
    # It revisits again: the parked rows get due times from their last fetch.
    revisits.jobs = _jobs(shop={"revisit": {"every": "1h"}})
    assert revisits.policies_changed() == ["shop"]
    _run(revisits)
    assert revisits.queued == len(URLS)  # the rest, due an hour after their fetch


def _memory_counts(revisits: Revisits) -> Counter[tuple[Any, ...]]:
    return Counter(
        {
            (domain, *key): pages
            for domain, groups in revisits.planner.counts.items()
            for key, pages in groups.items()
            if pages
        }
    )


def _counts(rows: list[tuple[str, str, int, int | None, int]]) -> Counter[tuple[Any, ...]]:
    return Counter({(d, j, r, c): n for d, j, r, c, n in rows})


def test_adaptive_groups_move_with_exact_counts(tmp_path: Path) -> None:
    wall = Wall()
    urls = [f"http://shop.test/{kind}/{i}" for kind in ("item", "list") for i in range(10)]
    first = {"rules": [{"match": "/item/", **ADAPTIVE}], "default": ADAPTIVE}
    revisits = _open(tmp_path / "f.db", wall, _jobs(shop={"revisit": first}))
    _fetch_all(revisits, "shop", urls, wall)
    wall.now += 2 * HOUR
    revisits.scan()
    # Half of each kind fetched again (with a rate class now), half still queued.
    _fetch_all(revisits, "shop", urls[:5] + urls[10:15], wall)
    before = {r.fp: r.plan_rule for r in _rows(revisits, urls)}
    assert set(before.values()) == {0, -1}
    # The /item/ rule goes to fixed; /list/ gets a rule of its own, adaptive.
    second = {"rules": [{"match": "/item/", "every": "1h"}, {"match": "/list/", **ADAPTIVE}]}
    revisits.jobs = _jobs(shop={"revisit": second})
    revisits.policies_changed()
    _run(revisits)
    db = revisits.frontier.db._db
    assert _counts(read_counts(db)) == _counts(group_counts(db)) == _memory_counts(revisits)
    rows = _rows(revisits, urls)
    assert {r.plan_rule for r in rows if "/item/" in r.url and not r.queued} == {None}
    assert {r.plan_rule for r in rows if "/list/" in r.url and not r.queued} == {1}
    assert {r.plan_rule for r in rows if r.queued} == {0, -1}  # moved at their fetch
    assert sum(r.queued for r in rows) == 10


def test_the_fingerprint_follows_what_sets_due_times() -> None:
    def digest(data: dict[str, Any]) -> str:
        return policy_digest(parse_revisit(data, "revisit", "t.yaml"))

    assert digest({"every": "1h"}) == digest({"every": "60m"})
    assert digest({"every": "1h"}) != digest({"every": "15s"})
    assert digest({"every": "1h"}) != digest({"every": "1h", "jitter": 0.1})
    assert digest({"every": "1h"}) == digest({"every": "1h", "expire": "30d"})
    rules = [{"match": "/a/", "every": "1h"}, {"match": "/b/", "every": "2h"}]
    assert digest({"rules": rules}) != digest({"rules": rules[::-1]})
    assert policy_digest(None) == ""


def test_the_master_reschedules_on_a_reload_and_parks_a_deleted_job(tmp_path: Path) -> None:
    hourly = Job(revisit={"every": "1h"})
    for core in make_core(tmp_path, {"shop": hourly}):
        for url in URLS[:5]:
            page = _page(url)
            core.revisits.on_page(page, "shop")
            core.revisits.settle([page.fp])
        reloaded = {**core.config.jobs, "shop": Job(revisit={"every": "15s"})}
        core.apply_config(dataclasses.replace(core.config, jobs=reloaded))
        core.revisit_tick()
        rows = _rows(core.revisits, URLS[:5])
        assert all(r.next_due == r.last_fetch + 15 for r in rows)
        queued = _rows(core.revisits, URLS[:1])[0]
        core.revisits.table.set_due([(queued.fp, 0.0)])
        assert core.revisits.scan() == 1  # one row queued when the job goes
        core.job_control.delete_job("shop")  # no job revisits now: the tick still parks its rows
        assert not _rows(core.revisits, URLS[:1])[0].queued  # its queue row went with the job
        assert not core.revisits.scanning and core.revisits.rescheduling
        core.revisit_tick()
        assert all(r.next_due is None for r in _rows(core.revisits, URLS[:5]))
        assert core.revisits.rescheduler.jobs_done == 2
