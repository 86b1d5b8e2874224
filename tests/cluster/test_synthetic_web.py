"""The synthetic web: a deterministic link graph, and a server that logs what it serves."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from support import REPO
from support.synthetic_web_helpers import client

from nadird.testing.graph import SiteGraph
from nadird.testing.web import (
    read_access_log,
)

REPO = REPO


# ------------------------------------------------------------------- graph


# ------------------------------------------------------------------ server


@pytest.mark.slow
async def test_cli_prints_its_port_and_serves(tmp_path: Path) -> None:
    log_path = tmp_path / "access.jsonl"
    proc = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "nadird.testing.web", "--hosts", "2", "--pages", "20"],
        *["--port", "0", "--access-log", str(log_path)],
        stdout=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    assert proc.stdout is not None
    try:
        info = json.loads(await asyncio.wait_for(proc.stdout.readline(), 10))
        graph = SiteGraph(hosts=2, pages=20, port=info["port"])
        assert info == {"port": info["port"], "hosts": graph.hosts, "seeds": graph.seeds()}
        async with client() as session, session.get(info["seeds"][1]) as resp:
            assert await resp.text() == graph.html("site-1.test", "/")
    finally:
        proc.terminate()
        returncode = await asyncio.wait_for(proc.wait(), 10)
    assert returncode == 0
    assert await proc.stdout.read() == b""  # exactly one line
    assert [(e.host, e.path) for e in read_access_log(str(log_path))] == [("site-1.test", "/")]
