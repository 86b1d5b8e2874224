"""A feeds job's hubs keep their own adaptive estimate: the domain's plan
(shared by freshness) does not take them, its other adaptive pages it does."""

from __future__ import annotations

from nadird.config import config_from_dict
from nadird.master.revisits.plan import RevisitPlanner
from nadird.revisit.plan import rate_class
from nadird.revisit.policy import Adaptive

SECTIONS = {"rules": [{"match": "/section/", "adaptive": {"min": "1m", "max": "1d"}}]}


def test_hub_groups_are_left_out_of_the_plan() -> None:
    config = {"jobs": {"news": {"feeds": True, "revisit": SECTIONS}}}
    jobs = dict(config_from_dict(config, "t.yaml").jobs)
    planner = RevisitPlanner(lambda: jobs, lambda domain, job: 1.0, clock=lambda: 0.0)
    klass = rate_class(1 / 60)
    feed, home, section = ("news", 0, klass), ("news", 1, klass), ("news", 2, klass)
    for key in (feed, home, section):
        planner.move("news.test", None, key)
    assert planner.tick(60.0) == 1
    plan = planner.plans["news.test"]
    assert set(plan.intervals) == {section}
    hub = Adaptive(30.0, 1800.0, 30.0)
    assert planner.lookup("news.test", feed, hub) == (None, None)
    assert planner.lookup("news.test", home, hub) == (None, None)
    interval, _ = planner.lookup("news.test", section, Adaptive(60.0, 86400.0))
    assert interval == plan.intervals[section]
