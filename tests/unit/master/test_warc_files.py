"""The archive's files: rotation, the temporary name, repair after a crash,
and a full disk (a real tmpfs), read back with warcio's own reader."""

from __future__ import annotations

import dataclasses
import gzip
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.smallfs import MountRefused, SmallFS
from warcio.archiveiterator import ArchiveIterator

from nadird.common.urls import fingerprint
from nadird.config import Config, MasterConfig, WarcConfig
from nadird.master.archive.files import OPEN_SUFFIX, WarcFiles, recover
from nadird.master.archive.records import PageRecords, own_record
from nadird.master.archive.service import WARC, Archive
from nadird.master.observe.health import StateHealth
from nadird.protocol.codec import decode, encode
from nadird.protocol.exchange import Exchange
from nadird.protocol.messages import PageResult, Results

URL = "http://site.test/page"


def exchange(body: bytes, status: str = "200 OK", url: str = URL) -> Exchange:
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n"
    return Exchange(
        url=url,
        started=1_700_000_000.25,
        request_head=b"GET /page HTTP/1.1\r\nHost: site.test\r\n\r\n",
        response_head=head.encode(),
        body=body,
        ip="192.0.2.7",
    )


def page(body: bytes, url: str = URL, status: int = 200) -> PageResult:
    return PageResult(
        url=url, fp=fingerprint(url), final_url=url, status=status, fetched_at=1.0, depth=0,
        exchanges=[exchange(body, url=url)],
    )  # fmt: skip


def records_of(body: bytes, url: str = URL) -> list[Any]:
    built, _ = PageRecords().page(page(body, url), "job", "node", lambda uri: None)
    return built


def read(path: Path) -> list[Any]:
    with open(path, "rb") as handle:
        return [(r.rec_type, r.content_stream().read()) for r in ArchiveIterator(handle)]


def test_the_exchanges_travel_in_a_results_message_and_cost_nothing_when_absent() -> None:
    message = Results(node="n", lease="l", epoch=1, job="j", pages=[page(b"<p>x</p>")])
    back = decode(encode(message))
    assert isinstance(back, Results)
    assert back.pages[0].exchanges == message.pages[0].exchanges
    plain = Results(node="n", lease="l", epoch=1, job="j", pages=[PageResult(
        url=URL, fp=fingerprint(URL), final_url=URL, status=200, fetched_at=1.0, depth=0,
    )])  # fmt: skip
    assert b"exchanges" not in encode(plain)  # sparse: not on the wire when empty


def test_files_rotate_at_max_size_each_whole_and_opened_by_warcinfo(tmp_path: Path) -> None:
    builder = PageRecords()
    files = WarcFiles(tmp_path, "crawl", 4000, {"software": "nadird/test"})
    for i in range(6):
        files.write(records_of(b"x" * 1500 + bytes([i])), builder.warcinfo)
    files.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) >= 2 and all(n.startswith("crawl-") and n.endswith(".warc.gz") for n in names)
    responses = 0
    for name in names:
        records = read(tmp_path / name)
        assert records[0][0] == "warcinfo" and b"software: nadird/test" in records[0][1]
        responses += sum(kind == "response" for kind, _ in records)
    assert responses == 6


def test_an_open_file_is_named_so_until_closed(tmp_path: Path) -> None:
    files = WarcFiles(tmp_path, "crawl", 10**9, {})
    files.write(records_of(b"<p>a</p>"), PageRecords().warcinfo)
    [current] = tmp_path.iterdir()
    assert current.name.endswith(OPEN_SUFFIX) and files.current == current
    closed = files.close()
    assert closed is not None and closed.name.endswith(".warc.gz") and not current.exists()


@pytest.mark.parametrize("keep", [0.5, 0.8, 0.99])
def test_a_file_cut_by_a_crash_is_completed_after_its_last_whole_record(
    tmp_path: Path, keep: float
) -> None:
    files = WarcFiles(tmp_path / "w", "crawl", 10**9, {})
    for i in range(4):
        files.write(records_of(b"body %d " % i * 200), PageRecords().warcinfo)
    whole = files.current
    assert whole is not None
    data = whole.read_bytes()
    cut = tmp_path / "w" / ("crashed" + OPEN_SUFFIX)
    cut.write_bytes(data[: int(len(data) * keep)])  # what a kill -9 mid-write leaves
    shutil.copy(whole, tmp_path / "whole.warc.gz")
    whole.unlink()
    [done] = recover(tmp_path / "w")
    assert done.renamed and done.path.name == "crashed.warc.gz" and done.cut > 0
    kept = read(done.path)
    assert len(kept) == done.records and 1 <= done.records < len(read(tmp_path / "whole.warc.gz"))
    assert kept == read(tmp_path / "whole.warc.gz")[: done.records]  # nothing whole was lost


def test_a_file_without_a_whole_record_is_left_and_reported(tmp_path: Path) -> None:
    stub = tmp_path / ("stub" + OPEN_SUFFIX)
    stub.write_bytes(gzip.compress(b"WARC/1.1\r\n" + _noise(1000))[:400])
    [left] = recover(tmp_path)
    assert not left.renamed and left.path == stub and stub.exists()


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[SmallFS]:
    try:
        fs = SmallFS(tmp_path / "small", 2 * 1024 * 1024).__enter__()
    except MountRefused as exc:
        pytest.skip(f"a tmpfs cannot be mounted here (needs root): {exc}")
    try:
        yield fs
    finally:
        fs.__exit__(None, None, None)


def test_a_full_disk_pauses_the_archive_and_it_resumes_when_space_returns(
    small_fs: SmallFS, tmp_path: Path
) -> None:
    warc = WarcConfig(dir=str(small_fs.mountpoint / "warc"), required=True)
    config = Config(warc=warc, master=MasterConfig(state_dir=str(tmp_path / "state")))
    health = StateHealth(str(tmp_path / "state"))
    archive = Archive(config, warc, health)
    first = Results(node="n", lease="l", epoch=1, job="j", pages=[page(b"a" * 5000)])
    assert archive.add(first, first.pages)
    small_fs.fill()
    # Random bytes do not compress: this record cannot fit.
    big = Results(node="n", lease="l", epoch=1, job="j", pages=[page(_noise(200_000), URL + "2")])
    assert not archive.add(big, big.pages)
    assert health.failing(WARC) and not health.healthy
    small_fs.free()
    assert archive.add(big, big.pages)
    assert health.healthy
    archive.close()
    [path] = (small_fs.mountpoint / "warc").iterdir()
    kinds = [kind for kind, _ in read(path)]
    # The failed write left nothing behind: each page once, whole.
    assert kinds == ["warcinfo", *["response", "request", "metadata"] * 2]


def _noise(size: int) -> bytes:
    return random.Random(7).randbytes(size)


def test_a_rotation_closes_the_file_and_the_next_page_starts_another(tmp_path: Path) -> None:
    warc = WarcConfig(dir=str(tmp_path / "warc"))
    config = Config(warc=warc, master=MasterConfig(state_dir=str(tmp_path / "s")))
    archive = Archive(config, warc, StateHealth(str(tmp_path / "s")))
    for name in ("a", "b"):
        message = Results(
            node="n", lease="l", epoch=1, job="j", pages=[page(b"<p>1</p>", URL + name)]
        )
        assert archive.add(message, message.pages)
        closed = archive.rotate()  # what a SIGHUP does
        assert closed is not None and closed.name.endswith(".warc.gz")
    assert archive.rotate() is None  # nothing open: nothing to close
    archive.close()
    assert len(archive.files) == 2 and len(set(archive.files)) == 2
    assert not list((tmp_path / "warc").glob("*" + OPEN_SUFFIX))


def test_an_exchange_no_parser_takes_is_counted_and_the_others_are_archived(
    tmp_path: Path,
) -> None:
    warc = WarcConfig(dir=str(tmp_path / "warc"))
    config = Config(warc=warc, master=MasterConfig(state_dir=str(tmp_path / "s")))
    archive = Archive(config, warc, StateHealth(str(tmp_path / "s")))
    bad = page(b"x", URL + "bad")
    broken = dataclasses.replace(bad.exchanges[0], response_head=b"\x00not http\r\n\r\n")
    bad = dataclasses.replace(bad, exchanges=[broken])
    empty = dataclasses.replace(bad, exchanges=[dataclasses.replace(broken, response_head=b"")])
    message = Results(node="n", lease="l", epoch=1, job="j", pages=[bad, empty, page(b"ok")])
    assert archive.add(message, message.pages)
    assert archive.stats["warc_bad_exchanges"] == 2
    archive.close()
    [path] = archive.files
    assert [kind for kind, _ in read(path)] == ["warcinfo", "response", "request", "metadata"]


def test_a_restarted_master_still_writes_revisits_for_what_it_archived(tmp_path: Path) -> None:
    warc = WarcConfig(dir=str(tmp_path / "warc"))
    config = Config(warc=warc, master=MasterConfig(state_dir=str(tmp_path / "s")))
    message = Results(node="n", lease="l", epoch=1, job="j", pages=[page(b"<p>same</p>")])
    for _ in range(2):  # two runs of the master on one state directory
        archive = Archive(config, warc, StateHealth(str(tmp_path / "s")))
        assert archive.add(message, message.pages)
        archive.close()
    records = []
    for path in sorted((tmp_path / "warc").iterdir()):
        with open(path, "rb") as handle:
            records += [r.rec_headers for r in ArchiveIterator(handle)]
    [first] = [h for h in records if h.get_header("WARC-Type") == "response"]
    [again] = [h for h in records if h.get_header("WARC-Type") == "revisit"]
    assert again.get_header("WARC-Refers-To-Date") == first.get_header("WARC-Date")
    assert again.get_header("WARC-Payload-Digest") == first.get_header("WARC-Payload-Digest")


def test_a_pages_own_record_is_its_final_answer_after_a_redirect(tmp_path: Path) -> None:
    final = URL + "/moved"
    hop = exchange(b"", status="301 Moved Permanently")
    result = dataclasses.replace(
        page(b"<p>here</p>", final), url=URL, fp=fingerprint(URL),
        exchanges=[hop, exchange(b"<p>here</p>", url=final)], rendered=True, body=b"<p>dom</p>",
    )  # fmt: skip
    built, _ = PageRecords().page(result, "job", "node", lambda uri: None)
    own = own_record(built)
    assert own is not None
    index, rendered = own
    assert built[index].rec_headers.get_header("WARC-Target-URI") == final and rendered
    files = WarcFiles(tmp_path, "crawl", 10**9, {})
    placed = files.append(built, PageRecords().warcinfo)
    with open(files.current or "", "rb") as handle:  # the offset is where that record starts
        handle.seek(placed.offsets[index])
        record = next(iter(ArchiveIterator(handle)))
    assert record.rec_type == "response" and record.content_stream().read() == b"<p>here</p>"
    assert own_record([]) is None


def test_files_deleted_while_the_master_was_down_lose_their_captures_at_start(
    tmp_path: Path,
) -> None:
    warc = WarcConfig(dir=str(tmp_path / "warc"))
    config = Config(warc=warc, master=MasterConfig(state_dir=str(tmp_path / "s")))
    archive = Archive(config, warc, StateHealth(str(tmp_path / "s")))
    for name in ("a", "b"):
        message = Results(node="n", lease="l", epoch=1, job="j", pages=[page(b"x", URL + name)])
        assert archive.add(message, message.pages)
        archive.rotate()
    archive.close()
    older, newer = sorted(archive.files)
    older.unlink()
    again = Archive(config, warc, StateHealth(str(tmp_path / "s")))
    while again.trim():
        pass
    assert again.stats["warc_captures_dropped"] == 1
    assert again.captures(fingerprint(URL + "a"), 10) == []
    assert [c.file for c in again.captures(fingerprint(URL + "b"), 10)] == [newer.name]
    again.close()
