"""`nadird crawl` as a user runs it: a subprocess against the synthetic web."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from nadird.testing import forkserver
from nadird.testing.cluster import read_records
from nadird.testing.graph import SiteGraph
from nadird.testing.web import LAST_MODIFIED, SyntheticWeb, etag_of, run_in_thread

pytestmark = pytest.mark.slow


def crawl(
    tmp_path: Path,
    web: SyntheticWeb,
    *extra: str,
    private: bool = True,
    seeds: list[str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    store = tmp_path / "crawl.db"
    args = [
        sys.executable,
        "-m",
        "nadird",
        "crawl",
        *(seeds or web.graph.seeds()),
        "--resolve",
        "*.test=127.0.0.1",
        "--delay",
        "0",
        "--workers",
        "2",
        "--store",
        f"sqlite:///{store}",
        *extra,
    ]
    if private:
        args.append("--allow-private")
    proc = forkserver.run(args, cwd=tmp_path, timeout=180)
    return proc, store


def summary(proc: subprocess.CompletedProcess[str], status: int = 0) -> dict[str, Any]:
    assert proc.returncode == status, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    data: dict[str, Any] = json.loads(last)
    assert data["event"] == "crawl_summary"
    return data


def same_domain_reachable(graph: SiteGraph, max_depth: int | None = None) -> dict[str, int]:
    """What the default scope (same registrable domain as the linking page) reaches."""
    reached: dict[str, int] = {}
    for seed in graph.seeds():
        netloc = seed.split("/")[2]
        reached.update(
            graph.reachable([seed], lambda u, n=netloc: u.split("/")[2] == n, max_depth=max_depth)
        )
    return reached


def records(store: Path) -> list[Any]:
    import asyncio

    return asyncio.run(read_records(str(store)))


def test_crawl_exits_0_and_its_summary_matches_the_store(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=5, pages=60)
    out = tmp_path / "out.jsonl"
    with run_in_thread(graph) as web:
        proc, store = crawl(tmp_path, web, "--out", str(out))
    result = summary(proc)
    stored = records(store)
    expected = same_domain_reachable(graph)
    assert {r.url for r in stored} == set(expected)
    assert result["complete"] is True
    # robots.txt disallows /private/: those URLs are recorded, never fetched.
    private = {u for u in expected if "/private/" in u}
    assert private
    assert result["pages"] == sum(1 for r in stored if r.error is None)
    assert result["pages"] == len(expected) - len(private)
    assert {r.url for r in stored if r.error == "robots: disallowed"} == private
    assert result["errors"] == len(private)
    assert not [e for e in web.entries() if e.path.startswith("/private/")]
    assert result["pages_per_s"] > 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == len(stored)
    for line in lines:
        assert {"url", "final_url", "status", "fetched_at", "job", "depth", "data"} <= set(line)
        assert line["depth"] == expected[line["url"]]
    # The response headers a monitoring job needs are stored with the page.
    fetched = [line for line in lines if line["status"] == 200]
    assert fetched
    for line in fetched:
        parts = urlsplit(line["url"])
        body = graph.resource(parts.hostname or "", parts.path).body
        assert line["headers"] == {"etag": etag_of(body), "last-modified": LAST_MODIFIED}


def test_max_pages_and_max_depth_bound_the_crawl(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=3, pages=80)
    with run_in_thread(graph) as web:
        proc, store = crawl(tmp_path, web, "--max-pages", "25")
        assert summary(proc)["pages"] == 25
        assert len(records(store)) == 25
        store.unlink()
        proc, store = crawl(tmp_path, web, "--max-depth", "1")
    summary(proc)
    expected = same_domain_reachable(graph, max_depth=1)
    assert {r.url: r.depth for r in records(store)} == expected


def test_refused_and_dead_destinations_are_recorded_errors(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=2, pages=10)
    with run_in_thread(graph) as web:
        # Loopback is refused without --allow-private: nothing reaches the server.
        # (Seeds that are no http(s) URL at all are refused before the crawl
        # starts, with exit status 2: see tests/test_cli.py.)
        proc, store = crawl(tmp_path, web, private=False, seeds=graph.seeds())
        assert web.entries() == []
    # Every seed failed: nothing fetched is a failed crawl, and stderr says
    # why and what lets loopback addresses in.
    result = summary(proc, status=1)
    assert result["nothing_fetched"] is True and result["pages"] == 0
    stored = records(store)
    assert result["errors"] == len(stored) == 2
    assert all(r.error is not None and r.error.startswith("blocked_address") for r in stored)
    assert "2 URLs were refused (blocked_address)" in proc.stderr
    assert "only with --allow-private" in proc.stderr
    assert "nothing was fetched: every URL failed (blocked_address: 2)" in proc.stderr


def test_a_crawl_whose_only_seed_is_dead_exits_1_and_counts_the_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    with run_in_thread(SiteGraph(hosts=1, pages=5)) as web:
        proc, _ = crawl(tmp_path, web, "--retries", "0", seeds=[f"http://127.0.0.1:{dead_port}/"])
    result = summary(proc, status=1)
    assert result["complete"] is True and result["nothing_fetched"] is True
    assert result["errors"] == result["dead_letters"] == 1 and result["pages"] == 0
    assert "every URL failed (dead letter (retries ran out): 1)" in proc.stderr
    assert "--allow-private" not in proc.stderr


def test_connection_refused_ends_in_dead_letters_and_the_crawl_goes_on(tmp_path: Path) -> None:
    import socket

    graph = SiteGraph(hosts=2, pages=10)
    with socket.socket() as probe:  # a port with nothing listening
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    dead_url = f"http://dead.test:{dead_port}/"
    with run_in_thread(graph) as web:
        proc, store = crawl(
            tmp_path,
            web,
            "--retries",
            "0",
            "--state-dir",
            str(tmp_path / "st"),
            seeds=[*graph.seeds(), dead_url],
        )
    result = summary(proc)
    assert dead_url not in {r.url for r in records(store)}
    # The errors: the robots.txt exclusions (/private/), recorded not retried,
    # and the dead URL, not stored. Some seeds were fetched: exit status 0.
    excluded = sum(1 for r in records(store) if r.error == "robots: disallowed")
    assert result["dead_letters"] == 1 and result["errors"] == excluded + 1
    assert result["pages"] > 0 and result["nothing_fetched"] is False
    listing = forkserver.run(
        [
            sys.executable,
            "-m",
            "nadird",
            "dead-letters",
            "list",
            "--state-dir",
            str(tmp_path / "st"),
        ],
        timeout=60,
    )
    assert listing.returncode == 0, listing.stderr
    [letter] = [json.loads(line) for line in listing.stdout.splitlines()]
    assert letter["url"] == dead_url and letter["attempts"] == 1
    assert letter["error"].startswith("connect")


def test_bad_config_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("fetch:\n  pool_sise: 3\n")
    proc = forkserver.run(
        [sys.executable, "-m", "nadird", "crawl", "http://a.test/", "--config", str(bad)],
        timeout=60,
    )
    assert proc.returncode == 2
    assert f"{bad}: fetch.pool_sise: unknown key" in proc.stderr


def test_the_config_files_store_and_state_dir_are_used_unless_the_command_line_says(
    tmp_path: Path,
) -> None:
    """`crawl -c FILE` used to write nadird-crawl.db whatever FILE's store.uri
    said, so that `nadird export -c FILE` found no store."""
    config = tmp_path / "site.yaml"
    config.write_text(
        f"store:\n  uri: sqlite:///{tmp_path / 'file.db'}\n"
        f"master:\n  state_dir: {tmp_path / 'file-state'}\n"
        "fetch:\n  allow_private: true\n  resolve: {'*.test': 127.0.0.1}\n"
    )
    graph = SiteGraph(hosts=1, pages=8)
    with run_in_thread(graph) as web:
        base = [sys.executable, "-m", "nadird", "crawl", *web.graph.seeds(), "-c", str(config)]
        base += ["--delay", "0"]
        run = forkserver.run(base, cwd=tmp_path, timeout=180)
        assert summary(run)["pages"] > 0
        assert (tmp_path / "file-state" / "frontier.db").exists()
        assert not (tmp_path / "nadird-crawl.db").exists()
        exported = forkserver.run(
            [sys.executable, "-m", "nadird", "export", "-c", str(config)], cwd=tmp_path, timeout=60
        )
        assert exported.returncode == 0, exported.stderr
        assert len(exported.stdout.splitlines()) == len(records(tmp_path / "file.db"))
        # The command line overrides the file, as everywhere else.
        override = ["--store", f"sqlite:///{tmp_path / 'cli.db'}", "--state-dir", "cli-state"]
        run = subprocess.run(
            [*base, *override], capture_output=True, text=True, timeout=180, cwd=tmp_path
        )
    assert summary(run)["pages"] > 0
    assert records(tmp_path / "cli.db") and (tmp_path / "cli-state" / "frontier.db").exists()


def test_revisit_on_the_command_line_satisfies_a_change_alert_rule(tmp_path: Path) -> None:
    """The alert rule's check used to run before --revisit was applied: exit 2."""
    config = tmp_path / "cont.yaml"
    config.write_text(
        "jobs:\n  default:\n    fields: {title: [{xpath: //title/text()}]}\n"
        "alerts:\n"
        "  channels: {log: {type: webhook, url: 'http://127.0.0.1:9/hook'}}\n"
        "  rules: [{type: change, job: default, fields: [title], channels: [log]}]\n"
    )
    with run_in_thread(SiteGraph(hosts=1, pages=3)) as web:
        proc, _ = crawl(tmp_path, web, "-c", str(config), "--revisit", "20s", "--for", "3s")
    # It ran (to the end of --for) instead of exiting 2 before starting.
    assert summary(proc)["timed_out"] is True
