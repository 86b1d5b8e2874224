"""`python -m nadird.testing.news_serve`: the living news web from the
command line, as the feeds manual has a user try it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from support.living_web_helpers import client, fetch

pytestmark = pytest.mark.slow  # starts the command in a process of its own

COMMAND = [sys.executable, "-m", "nadird.testing.news_serve"]


def test_the_command_serves_sites_each_found_its_own_way() -> None:
    args = ["--sites", "6", "--min-period", "1", "--max-period", "2", "--port", "0"]
    process = subprocess.Popen([*COMMAND, *args], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = json.loads(process.stdout.readline())
        hows = {site["host"]: site["how"] for site in line["sites"]}
        assert len(line["seeds"]) == 6 and set(hows.values()) >= {"rss", "news-sitemap", "home"}
        port = line["port"]

        async def read() -> dict[str, bytes]:
            got = {}
            async with client() as session:
                for host, how in hows.items():
                    path = {"home": "/", "news-sitemap": "/news-sitemap.xml"}.get(how, "/feed.xml")
                    status, _, body = await fetch(session, f"http://{host}:{port}{path}")
                    assert status == 200, (host, path)
                    got[how] = body
            return got

        bodies = asyncio.run(read())
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
    assert b"<rss" in bodies["rss"] and b"/articles/" in bodies["rss"]
    assert b"news:publication_date" in bodies["news-sitemap"]
    assert b'href="/articles/' in bodies["home"]
    bad = subprocess.run([*COMMAND, "--min-period", "5", "--max-period", "1"], capture_output=True,
                         text=True, timeout=30)  # fmt: skip
    assert bad.returncode == 2 and "--min-period" in bad.stderr
