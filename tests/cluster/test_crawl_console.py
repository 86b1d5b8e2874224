"""What `nadird crawl` writes: a page line per URL, progress that agrees with
the summary, and on a terminal readable lines that never run into the
progress line."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_crawl_command import crawl, records, summary

from nadird.testing.graph import SiteGraph
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow

PROGRESS = re.compile(
    r"pages +\d+ \| errors +\d+ \| queued +\d+ \| +[\d.]+ p/s \| workers \d+ \| \d\d:\d\d"
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_each_page_gets_one_line_and_the_last_progress_agrees(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=2, pages=30)
    with run_in_thread(graph) as web:
        proc, store = crawl(tmp_path, web)
    result = summary(proc)
    events = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    pages = [e for e in events if e["event"] == "page_crawled"]
    stored = records(store)
    assert sorted(e["url"] for e in pages) == sorted(r.url for r in stored)
    for page in pages:
        assert page["level"] == "info" and page["role"] == "worker"
        assert {"status", "bytes", "ms", "depth", "lease", "domain", "attempt"} <= set(page)
    # Robots-disallowed pages are errors (status 0); 404s are pages.
    assert result["errors"] == sum(1 for e in pages if "error" in e) > 0
    assert result["http_status"]["4xx"] == sum(1 for e in pages if e["status"] == 404) > 0
    last = [e for e in events if e["event"] == "progress"][-1]
    assert last["final"] is True
    assert (last["pages"], last["errors"]) == (result["pages"], result["errors"])
    assert result["stored_total"] == len(stored)


def run_on_terminal(args: list[str], cwd: Path, timeout: float = 120) -> tuple[str, str]:
    """Run with stderr on a pseudo-terminal; returns (stdout, what the terminal got)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower, cwd=cwd
    )
    os.close(follower)
    screen = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            screen += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    proc.wait(10)
    assert proc.stdout is not None
    return proc.stdout.read().decode(), screen.decode("utf-8", "replace")


def rendered(text: str) -> list[str]:
    """The lines a terminal shows: \\r back to column 0, ESC[K erases to the end."""
    lines = []
    for raw in ANSI.sub("", text.replace("\r\n", "\n")).split("\n"):
        row: list[str] = []
        col = 0
        for part in re.split(r"(\r|\x1b\[K)", raw):
            if part == "\r":
                col = 0
            elif part == "\x1b[K":
                del row[col:]
            else:
                row[col : col + len(part)] = list(part)
                col += len(part)
        lines.append("".join(row))
    return lines


def test_a_terminal_gets_console_lines_apart_from_the_progress_line(tmp_path: Path) -> None:
    graph = SiteGraph(hosts=2, pages=20)
    with run_in_thread(graph) as web:
        stdout, screen = run_on_terminal(crawl_args(tmp_path, web), tmp_path)
    result = json.loads(stdout.strip().splitlines()[-1])
    assert result["complete"] is True
    lines = [line for line in rendered(screen) if line.strip()]
    assert not any(line.startswith("{") for line in lines)  # console, not JSON
    crawled = [line for line in lines if " page_crawled " in line]
    assert len(crawled) == result["pages"] + result["errors"]
    assert all("role=worker" in line and "status=" in line for line in crawled)
    progress = [line for line in lines if PROGRESS.fullmatch(line)]
    assert progress
    for line in lines:
        # A whole progress line, or a log line with no piece of one.
        if not PROGRESS.fullmatch(line):
            assert "p/s" not in line and "| workers" not in line, line


def crawl_args(tmp_path: Path, web: SyntheticWeb) -> list[str]:
    return [
        sys.executable,
        "-m",
        "nadird",
        "crawl",
        *web.graph.seeds(),
        "--resolve",
        "*.test=127.0.0.1",
        "--allow-private",
        "--delay",
        "0.02",
        "--workers",
        "2",
        "--store",
        f"sqlite:///{tmp_path / 'crawl.db'}",
    ]
