"""The URL page's web archive section over a real master writing WARC files:
where each fetch's own record went (file and offset, from archive.db), a
`warcio extract` command that reads that record back (run here), revisits
and rendered pages told apart, and the versions linked to their records."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest
from support.console_helpers import config, http, login, running_master

from nadird.common.urls import fingerprint
from nadird.config import WarcConfig
from nadird.master.service.server import Master
from nadird.protocol.exchange import Exchange
from nadird.protocol.messages import PageResult, Results
from nadird.store.base import PageRecord

URL = "http://site.test/page"
WARCIO = str(Path(sys.executable).with_name("warcio"))


def fetched(at: float, body: bytes, rendered: bool = False) -> PageResult:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n"
    exchange = Exchange(
        url=URL, started=at, request_head=b"GET /page HTTP/1.1\r\nHost: site.test\r\n\r\n",
        response_head=head.encode(), body=body, ip="192.0.2.7",
    )  # fmt: skip
    return PageResult(
        url=URL, fp=fingerprint(URL), final_url=URL, status=200, fetched_at=at, depth=0,
        exchanges=[exchange], rendered=rendered, body=b"<p>DOM</p>" if rendered else None,
    )  # fmt: skip


def stored(at: float, title: str) -> PageRecord:
    return PageRecord(
        url=URL, fp=fingerprint(URL), final_url=URL, depth=0, job="default", fetched_at=at,
        status=200, content_type="text/html", data={"title": title}, signature=title,
    )  # fmt: skip


@pytest.fixture
async def master(tmp_path: Path) -> AsyncIterator[Master]:
    cfg = dataclasses.replace(config(tmp_path), warc=WarcConfig(dir=str(tmp_path / "warc")))
    async with running_master(cfg) as running:
        yield running


async def url_page(client: aiohttp.ClientSession, master: Master) -> str:
    assert master.api is not None
    async with client.get(f"{master.api.url}/ui/url?u={quote(URL, safe='')}") as response:
        assert response.status == 200
        return await response.text()


def cells_of(row: str) -> list[str]:
    return list(re.findall(r"<td[^>]*>(.*?)</td>", row))


def rows(html: str) -> list[list[str]]:
    """The captures table's cells as text (without the Copy button)."""
    table = re.search(r'<table class="captures" id="captures">(.*?)</table>', html, re.S)
    assert table is not None
    body = table.group(1).split("</thead>")[1]
    return [
        [re.sub(r"<button.*?</button>|<[^>]+>", "", cell).strip() for cell in cells_of(row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)
    ]


async def test_each_fetch_shows_its_warc_record_and_the_command_reads_it_back(
    master: Master,
) -> None:
    assert master.archive is not None
    message = Results(node="w1", lease="l", epoch=1, job="default", pages=[])
    master.archive.add(message, [fetched(1000.0, b"<p>first</p>")])
    master.archive.add(message, [fetched(2000.0, b"<p>first</p>", rendered=True)])  # same body
    await master.writer.store.write([stored(1000.0, "one")])
    await master.writer.store.write([stored(2000.0, "two")])
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        html = await url_page(client, master)
        newest, oldest = rows(html)
        assert newest[1:2] + newest[4:5] == ["revisit", "yes"]  # the same payload: a revisit
        assert oldest[1:2] + oldest[4:5] == ["response", "no"]
        name = oldest[2].split(" ")[0]
        assert re.fullmatch(r"nadird-\d{14}-00001-\d+\.warc\.gz", name)
        assert "being written" in oldest[2]  # the file is still open
        assert f"archived: {name} at {oldest[3]}" in html  # the version links its record
        command = unescape(oldest[5]).split()
        assert f'data-copy="{oldest[5]}"' in html  # the button copies the same command
        assert command[:3] == ["warcio", "extract", "--payload"] and command[-1] == oldest[3]
        read = subprocess.run([WARCIO, *command[1:]], capture_output=True, timeout=30)
        assert read.stdout == b"<p>first</p>", read.stderr
        master.archive.rotate()  # the file is closed: its final name
        newest, oldest = rows(await url_page(client, master))
        assert oldest[2] == name and "--payload" not in newest[5]
        read = subprocess.run([WARCIO, *unescape(newest[5]).split()[1:]], capture_output=True)
        assert b"WARC-Type: revisit" in read.stdout


async def test_a_master_without_warc_says_so(tmp_path: Path) -> None:
    async with running_master(config(tmp_path)) as master, http() as client:
        await master.writer.store.write([stored(1.0, "x")])
        await login(client, master.api.url)  # type: ignore[union-attr]
        html = await url_page(client, master)
    assert "This master writes no WARC files" in html and 'id="captures"' not in html


async def test_the_captures_of_a_file_deleted_leave_archive_db_when_a_file_closes(
    master: Master,
) -> None:
    archive = master.archive
    assert archive is not None
    message = Results(node="w1", lease="l", epoch=1, job="default", pages=[])
    archive.add(message, [fetched(1000.0, b"<p>first</p>")])
    first = archive.rotate()
    archive.add(message, [fetched(2000.0, b"<p>second</p>")])
    assert first is not None and not archive.trim()  # every file is there
    first.unlink()  # the operator deletes (or moves away) the older file
    second = archive.rotate()  # the master looks when a file closes
    ticks = 1
    while archive.trim():  # what the master's housekeeping does once a tick
        ticks += 1
    assert ticks < 10 and archive.stats["warc_captures_dropped"] == 1
    await master.writer.store.write([stored(2000.0, "two")])
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        (only,) = rows(await url_page(client, master))
    assert second is not None and only[2] == second.name
    archive.rotate()
    assert not archive.trim() and archive.stats["warc_captures_dropped"] == 1


async def test_the_url_page_names_the_page_that_led_to_it(master: Master) -> None:
    archive = master.archive
    assert archive is not None
    message = Results(node="w1", lease="l", epoch=1, job="default", pages=[])
    parent = "http://site.test/list?page=2&sort=a"
    archive.add(message, [fetched(1000.0, b"<p>one</p>")], {fingerprint(URL): parent})
    async with http() as client:
        await login(client, master.api.url)  # type: ignore[union-attr]
        html = await url_page(client, master)
    via = re.search(r'<p id="via">.*?<a href="([^"]+)"><bdi>([^<]+)</bdi>', html)
    assert via is not None, html
    assert unescape(via.group(2)) == parent
    assert unescape(via.group(1)) == f"/ui/url?u={quote(parent, safe='/')}"
