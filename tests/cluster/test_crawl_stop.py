"""`nadird crawl` as a process: Ctrl-C and SIGTERM, resuming, its workers' log level, --out."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from nadird.testing.cluster import read_records, wait_until
from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow


def crawl_command(web: SyntheticWeb, tmp_path: Path, *extra: str) -> list[str]:
    first, *others = web.graph.seeds()
    # Options between the seed URLs, as a user types them.
    return [
        sys.executable,
        "-m",
        "nadird",
        "crawl",
        first,
        "--resolve",
        "*.test=127.0.0.1",
        *others,
        "--allow-private",
        "--workers",
        "2",
        "--store",
        f"sqlite:///{tmp_path / 'crawl.db'}",
        *extra,
    ]


def events(stderr: str) -> list[dict[str, Any]]:
    found = []
    for line in stderr.splitlines():
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
    return found


def summary_of(stdout: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    assert data["event"] == "crawl_summary"
    return data


def same_domain_reachable(graph: SiteGraph) -> set[str]:
    reached: set[str] = set()
    for seed in graph.seeds():
        netloc = seed.split("/")[2]
        reached |= set(graph.reachable([seed], lambda u, n=netloc: u.split("/")[2] == n))
    return reached


def stored_urls(tmp_path: Path) -> list[str]:
    import asyncio

    return [r.url for r in asyncio.run(read_records(str(tmp_path / "crawl.db")))]


def interrupt(
    web: SyntheticWeb, tmp_path: Path, sig: signal.Signals
) -> tuple[int, float, str, str]:
    """Start a slow crawl, send `sig` once pages are being fetched; (status, seconds, out, err)."""
    command = crawl_command(web, tmp_path, "--delay", "0.1", "--state-dir", str(tmp_path / "st"))
    log = tmp_path / "crawl.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=tmp_path,
        )
    try:
        # Both workers at work (a worker still starting up has nothing to hand back).
        def registered() -> bool:
            return log.read_text().count('"worker_registered"') == 2

        assert wait_until(registered, 60), log.read_text()[-3000:]
        assert wait_until(lambda: len(web.entries()) >= 12, 60), "the crawl never got going"
        sent = time.monotonic()
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=30)
        return proc.returncode, time.monotonic() - sent, out, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_stops_at_once_hands_leases_back_and_the_next_crawl_resumes(
    tmp_path: Path,
) -> None:
    graph = SiteGraph(hosts=3, pages=80)
    with run_in_thread(graph) as web:
        status, seconds, out, err = interrupt(web, tmp_path, signal.SIGINT)
        assert status == 130, err[-3000:]
        assert seconds < 5, seconds
        result = summary_of(out)
        assert result["complete"] is False and result["signal"] == "SIGINT"
        logged = events(err)
        # Each worker stopped by itself (nothing killed) after handing its bags back.
        stopped = [e for e in logged if e["event"] == "worker_stopped"]
        assert len(stopped) == 2
        assert not [e for e in logged if e["event"] in ("worker_restarted", "stop_forced")]
        [master_stopped] = [e for e in logged if e["event"] == "master_stopped"]
        assert master_stopped["leases"] == 0 and master_stopped["queued"] > 0
        first = set(stored_urls(tmp_path))
        assert 0 < len(first) < len(same_domain_reachable(graph))

        again = subprocess.run(
            crawl_command(web, tmp_path, "--delay", "0", "--state-dir", str(tmp_path / "st")),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
    assert again.returncode == 0, again.stderr[-3000:]
    assert summary_of(again.stdout)["complete"] is True
    # A clean stop leaves no lease to wait for: dispatch starts at once.
    [started] = [e for e in events(again.stderr) if e["event"] == "master_started"]
    assert started["hold"] == 0.0 and started["queued"] > 0
    urls = stored_urls(tmp_path)
    assert len(urls) == len(set(urls))
    assert set(urls) == same_domain_reachable(graph)


def test_sigterm_stops_with_status_143_and_the_summary(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=2, pages=80)
    with run_in_thread(graph) as web:
        status, seconds, out, err = interrupt(web, tmp_path, signal.SIGTERM)
    assert status == 143, err[-3000:]
    assert seconds < 5, seconds
    result = summary_of(out)
    assert result["complete"] is False and result["signal"] == "SIGTERM"
    assert result["pages"] == len(stored_urls(tmp_path)) > 0


def test_log_level_reaches_the_workers_and_out_csv_writes_csv(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=2, pages=20)
    out = tmp_path / "pages.csv"
    with run_in_thread(graph) as web:
        proc = subprocess.run(
            crawl_command(
                web, tmp_path, "--delay", "0", "--log-level", "warning", "--out", str(out)
            ),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = summary_of(proc.stdout)
    logged = events(proc.stderr)
    # Workers logged worker_registered/worker_stopped at info whatever was asked.
    assert [e for e in logged if e.get("level") in ("debug", "info")] == []
    rows = list(csv.DictReader(out.open(encoding="utf-8", newline="")))
    assert rows and {r["url"] for r in rows} == set(stored_urls(tmp_path))
    assert len(rows) == result["pages"] + result["errors"]
    assert {"url", "final_url", "status", "depth", "error"} <= set(rows[0])


def test_for_ends_a_one_shot_crawl_too_and_the_summary_says_it_timed_out(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=2, pages=80)
    with run_in_thread(graph) as web:
        started = time.monotonic()
        proc = subprocess.run(
            crawl_command(web, tmp_path, "--delay", "0.2", "--for", "3s"),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = summary_of(proc.stdout)
    # No --revisit: cut short by the time given, and the summary says why.
    assert result["complete"] is False and result["signal"] is None
    assert result["timed_out"] is True and "revisits" not in result
    assert 0 < result["pages"] == len(stored_urls(tmp_path)) < len(same_domain_reachable(graph))
    assert took < 30


def test_a_second_ctrl_c_exits_at_once_with_a_summary_and_no_temporary_state(
    tmp_path: Path,
) -> None:
    """It used to exit with no summary and leave nadird-crawl-* in the temp dir."""
    import os

    temp = tmp_path / "tmp"
    temp.mkdir()
    graph = SiteGraph(hosts=3, pages=80)
    log = tmp_path / "crawl.log"
    with run_in_thread(graph) as web, log.open("w") as err:
        proc = subprocess.Popen(
            crawl_command(web, tmp_path, "--delay", "0.2"),
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "TMPDIR": str(temp)},
        )
        try:
            assert wait_until(lambda: len(web.entries()) >= 6, 60), log.read_text()[-3000:]
            assert [p.name[:13] for p in temp.iterdir()] == ["nadird-crawl-"]
            proc.send_signal(signal.SIGINT)
            time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130
    assert "stop_forced" in log.read_text()
    result = summary_of(out)
    assert result["complete"] is False and result["forced"] is True
    assert result["signal"] == "SIGINT" and result["pages"] > 0
    assert list(temp.iterdir()) == []


def workers_of(state_dir: Path) -> list[int]:
    """The pids of the worker processes whose config lies in `state_dir`."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:  # not a process, or gone
            continue
        if b"worker" in argv and any(str(state_dir).encode() in a for a in argv):
            pids.append(int(proc.name))
    return pids


def test_a_crawl_killed_outright_takes_its_workers_with_it(tmp_path: Path) -> None:
    # Workers run in their own session (a Ctrl-C reaches the crawl only), so a
    # SIGKILL of the crawl does not reach them: without the parent-death
    # signal they waited for ever for a master that was gone.
    graph = SiteGraph(hosts=3, pages=80)
    with run_in_thread(graph) as web:
        status, _, _, err = interrupt(web, tmp_path, signal.SIGKILL)
        try:
            assert status == -signal.SIGKILL
            assert wait_until(lambda: not workers_of(tmp_path / "st"), 15), err[-2000:]
        finally:
            for pid in workers_of(tmp_path / "st"):
                os.kill(pid, signal.SIGKILL)
