"""The living web (pages changing as Poisson processes in virtual time) and its judge."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.living_web_helpers import client, fetch

from nadird.testing.living import LivingWeb, ManualClock, read_living_log

# ------------------------------------------------------------------ changes


# ---------------------------------------------------------- conditional GET


# ------------------------------------------------------------------- noise


# ------------------------------------------------------------------- judge


# --------------------------------------------------------------------- CLI


@pytest.mark.slow  # starts the living web's command in a process of its own
def test_the_command_serves_what_any_process_can_rebuild(tmp_path: Path) -> None:
    log = tmp_path / "living.jsonl"
    command = [sys.executable, "-m", "nadird.testing.living", "--pages", "20", "--scale"]
    command += ["600", "--port", "0", "--seed", "3", "--log", str(log)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = json.loads(process.stdout.readline())
        assert line["hosts"] == ["living-0.test"] and line["scale"] == 600.0
        rebuilt = LivingWeb(pages=20, seed=3, clock=ManualClock())

        async def crawl() -> None:
            async with client() as session:
                for page in rebuilt.pages:
                    url = f"http://{page.host}:{line['port']}{page.path}"
                    assert (await fetch(session, url))[0] == 200

        asyncio.run(crawl())
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
    served = read_living_log(str(log))
    assert [e.page for e in served] == list(range(20))
    for entry in served:
        assert entry.version == rebuilt.pages[entry.page].schedule.version_at(entry.t)
    assert max(e.t for e in served) > 0  # time ran, 600 times faster
    bad = subprocess.run([*command[:6], "0"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "time scale" in bad.stderr
