"""Log formats, the level gate the hot paths read, the page line, and the
histogram the master observes once per page."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from nadird.common import logs
from nadird.common.http_status import status_classes
from nadird.common.logs import configure, gate, get_logger, set_level
from nadird.common.progress import CLEAR_LINE, Console
from nadird.common.urls import fingerprint
from nadird.master.observe.metrics import MasterMetrics
from nadird.protocol.messages import PageResult
from nadird.worker.page_log import page_crawled


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    yield
    configure("test", "t", "info", io.StringIO(), "json")


def page(url: str = "http://a.test/x", status: int = 404) -> PageResult:
    return PageResult(
        url=url, fp=fingerprint(url), final_url=url, status=status, fetched_at=1.0, depth=2,
        elapsed=0.0125, size=321,
    )  # fmt: skip


def test_json_lines_off_a_terminal_and_console_lines_on_one() -> None:
    piped, terminal = io.StringIO(), Terminal()
    assert configure("worker", "w1", "info", piped) == "json"
    get_logger().info("hello", url="http://a.test/")
    event = json.loads(piped.getvalue())
    assert event["event"] == "hello" and event["node"] == "w1" and event["role"] == "worker"
    assert configure("worker", "w1", "info", terminal) == "console"
    get_logger().info("hello", url="http://a.test/")
    text = terminal.getvalue()
    assert not text.startswith("{") and "hello" in text and "http://a.test/" in text
    asked = Terminal()
    assert configure("worker", "w1", "info", asked, "json") == "json"  # asked for: kept
    get_logger().info("hello")
    assert json.loads(asked.getvalue())["event"] == "hello"


def test_the_gate_follows_the_level_and_hides_debug_lines() -> None:
    out = io.StringIO()
    configure("master", "m", "info", out, "json")
    assert gate.info and not gate.debug
    get_logger().debug("hidden")
    set_level("debug")  # a SIGHUP with log_level: debug
    assert gate.debug
    get_logger().debug("shown")
    assert [json.loads(line)["event"] for line in out.getvalue().splitlines()] == ["shown"]


def test_the_page_line_names_url_status_bytes_time_lease_and_domain() -> None:
    out = io.StringIO()
    configure("worker", "w1", "info", out, "json")
    page_crawled("debug", page(), "L-1", "a.test", 2)  # daemons: debug, hidden at info
    assert out.getvalue() == ""
    page_crawled("info", page(), "L-1", "a.test", 2)
    event = json.loads(out.getvalue())
    assert event["event"] == "page_crawled" and event["level"] == "info"
    assert (event["url"], event["status"], event["bytes"], event["ms"]) == (
        "http://a.test/x",
        404,
        321,
        12.5,
    )
    assert (event["lease"], event["domain"], event["attempt"], event["depth"]) == (
        "L-1",
        "a.test",
        2,
        2,
    )
    assert "error" not in event  # a 404 is a page, not an error


def test_a_log_line_never_runs_into_the_progress_line() -> None:
    screen = Terminal()
    console = Console(screen)
    console.show("pages 1")
    console.write("worker_joined\n")
    console.show("pages 2")
    console.end()
    # Wiped before the log line, drawn again under it, left in place at the end.
    assert screen.getvalue() == (f"pages 1{CLEAR_LINE}worker_joined\npages 1{CLEAR_LINE}pages 2\n")
    console.write("after\n")
    assert screen.getvalue().endswith("pages 2\nafter\n")


def test_the_page_histogram_counts_each_value_in_its_bucket() -> None:
    metrics = MasterMetrics()
    for value in (0.05, 0.051, 0.3, 100.0):
        metrics.fetch_seconds.observe(value)
    families = {f.name: f for f in text_string_to_metric_families(metrics.exposition().decode())}
    samples = {
        (s.name, s.labels.get("le")): s.value for s in families["nadird_fetch_seconds"].samples
    }
    assert samples[("nadird_fetch_seconds_bucket", "0.05")] == 1  # le: the bound included
    assert samples[("nadird_fetch_seconds_bucket", "0.1")] == 2
    assert samples[("nadird_fetch_seconds_bucket", "0.5")] == 3
    assert samples[("nadird_fetch_seconds_bucket", "60.0")] == 3
    assert samples[("nadird_fetch_seconds_bucket", "+Inf")] == 4
    assert samples[("nadird_fetch_seconds_count", None)] == 4
    assert samples[("nadird_fetch_seconds_sum", None)] == pytest.approx(100.401)


def test_statuses_are_counted_by_class() -> None:
    assert status_classes({200: 5, 204: 1, 301: 2, 404: 3, 410: 1, 500: 1}) == {
        "2xx": 6, "3xx": 2, "4xx": 4, "5xx": 1
    }  # fmt: skip
    assert logs.resolve_format("auto", io.StringIO()) == "json"
