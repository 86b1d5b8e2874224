"""A master daemon's archive: a new file on SIGHUP, and `warc.required` on a
disk that fills up (a real tmpfs): the crawl pauses, stores no page it could
not archive, and ends exact once space returns."""

from __future__ import annotations

import signal
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.smallfs import MountRefused, SmallFS
from test_warc_crawl import read_records

from nadird.cli.client import endpoint
from nadird.config import load_config
from nadird.master.archive.service import WARC
from nadird.testing.checks import assert_exact_store, expected_set, page_requests, start_crawl
from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


@pytest.fixture
def warc_disk(cluster: Cluster) -> Iterator[SmallFS]:
    try:
        fs = SmallFS(cluster.workdir / "warc", 24 * 1024 * 1024).__enter__()
    except MountRefused as exc:
        pytest.skip(f"a tmpfs cannot be mounted here (needs root): {exc}")
    try:
        yield fs
    finally:
        fs.__exit__(None, None, None)


def healthz(cluster: Cluster) -> int:
    api = cluster.workdir / "state" / "api.json"
    if not api.exists():
        return 0
    import json

    url = json.loads(api.read_text())["url"]
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def scrape(cluster: Cluster) -> dict[str, float]:
    """/metrics of the running master, one value per sample name."""
    base, token = endpoint(load_config(cluster.workdir / "master.yaml"), None, None)
    request = urllib.request.Request(
        base + "/metrics", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        text = answer.read().decode()
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if not sample.labels
    }


def test_sighup_starts_a_file_and_a_full_disk_stores_nothing_unarchived(
    cluster: Cluster, warc_disk: SmallFS
) -> None:
    graph = SiteGraph(hosts=4, pages=120)
    warc_dir = warc_disk.mountpoint
    with run_in_thread(graph, latency=0.01) as web:
        total = len(expected_set(graph))
        master = start_crawl(
            cluster,
            graph,
            warc={"dir": str(warc_dir), "required": True, "prefix": "t"},
            master={"state_retry_delay": 0.1, "state_retry_max_delay": 0.4},
        )
        assert wait_until(lambda: len(page_requests(web)) > 0.2 * total, 60)
        master.kill(signal.SIGHUP)  # a reload: the file is closed, the next one begins
        assert wait_until(lambda: list(warc_dir.glob("t-*.warc.gz")), 30)
        assert wait_until(lambda: len(page_requests(web)) > 0.4 * total, 60)
        warc_disk.fill()
        assert wait_until(lambda: healthz(cluster) == 503, 30)
        metrics = scrape(cluster)
        assert metrics["nadird_warc_failures_total"] >= 1 and metrics["nadird_state_healthy"] == 0
        assert metrics["nadird_warc_records_total"] > 0 and metrics["nadird_warc_bytes_total"] > 0
        warc_disk.free()
        assert cluster.wait(master, 120) == 0
    assert_exact_store(cluster, graph)
    records = read_records(warc_dir)
    archived = {r["headers"]["WARC-Target-URI"] for r in records if r["type"] == "response"}
    stored = {r.url for r in cluster.records()}
    assert stored <= archived  # every stored page has its exchange in the archive
    names = sorted(p.name for p in warc_dir.iterdir() if not p.name.startswith("."))
    assert len(names) >= 2 and all(n.endswith(".warc.gz") for n in names), names
    events = cluster.proc("master").logs()
    failed = [e for e in events if e.get("event") == "state_write_failed"]
    # Only the archive failed (a small batch may still fit now and then).
    assert failed and {e["file"] for e in failed} == {WARC}
    assert any(e.get("event") == "state_write_recovered" and e["file"] == WARC for e in events)
    dropped = [e for e in events if e.get("reason") == "archive not writable (warc.required)"]
    assert dropped, "no results were held back while the archive was full"
