"""A crawl whose job Lexbor serves (CSS and regex fields only): the same
exact store and the same one fetch per page as the lxml jobs of test_cluster."""

from __future__ import annotations

from collections import Counter

import pytest

from nadird.job.parser_choice import page_parser
from nadird.job.spec import Job
from nadird.testing.checks import FIELDS, assert_exact_store, expected_set, page_requests, site_job
from nadird.testing.cluster import Cluster
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow

# The fields of test_cluster, with the XPath title as CSS: nothing needs lxml.
CSS_FIELDS = {**FIELDS, "title": [{"css": "title"}]}


def test_a_lexbor_job_stores_exactly_the_reachable_set_once(cluster: Cluster) -> None:
    graph = SiteGraph(hosts=6, pages=80)
    jobs = site_job(graph, fields=CSS_FIELDS)
    assert page_parser(Job.from_wire(jobs["default"])) == "lexbor"
    with run_in_thread(graph) as web:
        config = cluster.master_config(jobs=jobs, seeds=graph.seeds())
        master = cluster.start("master", "master", config)
        for i in (1, 2):
            cluster.start("worker", f"w{i}", cluster.worker_config(i))
        assert cluster.wait(master, 120) == 0
        entries = page_requests(web)
    assert_exact_store(cluster, graph)
    fetched = Counter(graph.canonical(f"http://{e.host}{e.path}") for e in entries)
    assert set(fetched) == set(expected_set(graph)) and max(fetched.values()) == 1
    for record in cluster.records():
        if record.content_type == "text/html" and "/p/" in record.url:
            want = graph.expected_fields(record.url)
            assert record.data == {k: want[k] for k in CSS_FIELDS}, record.url
