"""Error kinds are a type (nadird.common.errors.ErrorKind): the worker builds every
error through FetchError(kind, detail), the wire and the store carry the kind
as its own field, and whether a kind is retried is decided by the kind."""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import msgpack
import pytest

import nadird.worker
from nadird.common.errors import ErrorKind, FetchError, ProtocolError
from nadird.common.typecheck import Mismatch, convert
from nadird.common.urls import fingerprint
from nadird.master.results.retries import is_transient
from nadird.protocol.codec import decode, encode
from nadird.protocol.fastbuild import builder
from nadird.protocol.messages import PageResult, Results
from nadird.store.base import PageRecord
from nadird.store.mongo import docs as mongo_docs
from nadird.store.mongo import spool
from nadird.store.sqlite.schema import SCHEMA_VERSION
from nadird.store.sqlite.store import SqliteStore

WORKER = Path(nadird.worker.__file__).parent
TRANSIENT = {"timeout", "connect", "dns", "http_error", "proxy"}


def page(error: str | None = None, kind: ErrorKind | None = None, status: int = 0) -> PageResult:
    url = "http://a.test/p"
    return PageResult(
        url=url,
        fp=fingerprint(url),
        final_url=url,
        status=status,
        fetched_at=1.5,
        depth=0,
        error=error,
        error_kind=kind,
    )


def record(n: int, error: str | None) -> PageRecord:
    url = f"http://a.test/{n}"
    return PageRecord(
        url=url,
        fp=fingerprint(url),
        final_url=url,
        status=0,
        fetched_at=float(n),
        job="j",
        depth=0,
        error=error,
    )


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_only_network_failures_are_transient(kind: ErrorKind) -> None:
    assert kind.transient is (kind.value in TRANSIENT)
    # The master's retry decision is the kind's, whatever the error text says.
    assert is_transient(page(f"{kind}: something", kind)) is kind.transient
    assert is_transient(page("timeout: looks transient", kind)) is kind.transient


def test_statuses_still_decide_for_pages_without_an_error() -> None:
    assert is_transient(page(status=503)) and is_transient(page(status=429))
    assert not is_transient(page(status=404)) and not is_transient(page(status=200))


def _fetch_error_kinds(path: Path) -> list[tuple[str, int, ast.expr]]:
    """The first argument of every FetchError(...) call in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "FetchError":
            found.append((path.name, node.lineno, node.args[0]))
    return found


def test_every_kind_the_worker_builds_is_a_member_and_every_member_is_built() -> None:
    built: set[str] = set()
    for path in sorted(WORKER.rglob("*.py")):
        for name, line, arg in _fetch_error_kinds(path):
            where = f"{name}:{line}"
            if isinstance(arg, ast.Attribute) and arg.attr == "kind":
                continue  # a copy of another error's kind (robots.txt's, for its pages)
            assert isinstance(arg, ast.Attribute), f"{where}: kind is not ErrorKind.X"
            assert isinstance(arg.value, ast.Name) and arg.value.id == "ErrorKind", where
            assert arg.attr in ErrorKind.__members__, f"{where}: no ErrorKind.{arg.attr}"
            built.add(arg.attr)
    # Only `unknown` is never built: it is what an unreadable stored text reads as.
    assert set(ErrorKind.__members__) - built == {"UNKNOWN"}


def test_the_worker_writes_no_error_text_by_hand() -> None:
    for path in sorted(WORKER.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "PageResult"):
                continue
            for keyword in node.keywords:
                if keyword.arg == "error":
                    literal = isinstance(keyword.value, ast.Constant | ast.JoinedStr)
                    assert not literal, f"{path.name}:{node.lineno}: error text by hand"


def test_fetch_error_is_kind_and_detail() -> None:
    error = FetchError(ErrorKind.TOO_LARGE, "body exceeds 10 bytes")
    assert error.message == str(error) == "too_large: body exceeds 10 bytes"
    assert (error.kind, error.detail) == (ErrorKind.TOO_LARGE, "body exceeds 10 bytes")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("timeout: read after 30 s", ErrorKind.TIMEOUT),
        ("robots: disallowed", ErrorKind.ROBOTS),
        ("connect: refused (robots.txt)", ErrorKind.CONNECT),
        ("internal: KeyError: 'x'", ErrorKind.INTERNAL),
        ("exploded: nobody knows", ErrorKind.UNKNOWN),
        ("no colon at all", ErrorKind.UNKNOWN),
        ("", ErrorKind.UNKNOWN),
    ],
)
def test_the_kind_an_older_error_text_names(text: str, kind: ErrorKind) -> None:
    assert ErrorKind.of_message(text) is kind


def test_every_kind_crosses_the_wire() -> None:
    pages = [page(f"{kind}: detail {i}", kind) for i, kind in enumerate(ErrorKind)]
    pages.append(page())
    sent = Results(node="w1", lease="l1", epoch=1, job="j", pages=pages)

    frame = encode(sent)
    body = msgpack.unpackb(frame)
    got = decode(frame)

    assert [p["error_kind"] for p in body["pages"]] == [*(k.value for k in ErrorKind), None]
    assert got == sent
    assert isinstance(got, Results)
    assert all(type(p.error_kind) is ErrorKind for p in got.pages[:-1])


def _frame_with(**changes: Any) -> bytes:
    body = msgpack.unpackb(encode(Results("w1", "l1", 1, "j", [page("dns: no such host")])))
    body["pages"][0].update(changes)
    body["pages"][0] = {k: v for k, v in body["pages"][0].items() if v is not _DROP}
    packed: bytes = msgpack.packb(body, use_bin_type=True)
    return packed


_DROP = object()


@pytest.mark.parametrize("value", ["exploded", "TIMEOUT", "", 3, ["timeout"]])
def test_a_kind_the_master_does_not_know_is_refused(value: object) -> None:
    with pytest.raises(ProtocolError, match="error_kind: expected one of 'timeout'"):
        decode(_frame_with(error_kind=value))


def test_a_kind_without_an_error_text_is_refused() -> None:
    with pytest.raises(ProtocolError, match="error_kind without an error"):
        decode(_frame_with(error=None, error_kind="timeout"))


def test_an_older_workers_result_gets_the_kind_its_text_names() -> None:
    got = decode(_frame_with(error_kind=_DROP))
    assert isinstance(got, Results)
    assert got.pages[0].error_kind is ErrorKind.DNS and got.pages[0].error == "dns: no such host"


def test_both_decoders_give_the_member() -> None:
    fast = builder(ErrorKind)
    member = ErrorKind.RENDER_TIMEOUT
    assert fast("render_timeout") is convert("render_timeout", ErrorKind) is member
    with pytest.raises(Mismatch, match="expected one of"):
        convert("nope", ErrorKind, "k")


async def test_an_older_sqlite_store_gets_kinds_from_its_error_texts(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = SqliteStore(str(path))
    await store.open()
    texts = ["timeout: read", "robots: disallowed", "connect: x (robots.txt)", "gone: ?", None]
    await store.write([record(i, text) for i, text in enumerate(texts)])
    await store.close()
    with sqlite3.connect(path) as raw:  # the store as schema version 4 wrote it
        raw.execute("ALTER TABLE pages DROP COLUMN error_kind")
        raw.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")

    store = SqliteStore(str(path))
    await store.open()
    back = {r.error: r.error_kind async for r in store.iter_records()}
    await store.close()

    assert SCHEMA_VERSION >= 5
    assert back == {
        "timeout: read": ErrorKind.TIMEOUT,
        "robots: disallowed": ErrorKind.ROBOTS,
        "connect: x (robots.txt)": ErrorKind.CONNECT,
        "gone: ?": ErrorKind.UNKNOWN,
        None: None,
    }
    with sqlite3.connect(path) as raw:  # in the column itself, for queries too
        stored = dict(raw.execute("SELECT error, error_kind FROM pages"))
    assert stored["timeout: read"] == "timeout" and stored[None] is None


async def test_a_current_store_keeps_the_kind_it_was_given(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "new.db"))
    await store.open()
    given = dataclasses.replace(record(1, "timeout: read"), error_kind=ErrorKind.RENDER)
    await store.write([given, record(2, "timeout: read")])
    back = [r async for r in store.iter_records()]
    await store.close()
    # A kind is never guessed for a row written with one field or the other.
    assert [r.error_kind for r in back] == [ErrorKind.RENDER, None]


def test_a_stored_name_reads_as_the_member_and_an_unknown_one_as_unknown() -> None:
    assert dataclasses.replace(record(1, "x: y"), error_kind="dns").error_kind is ErrorKind.DNS
    assert dataclasses.replace(record(1, "x: y"), error_kind="?").error_kind is ErrorKind.UNKNOWN


def test_an_older_mongo_document_gets_the_kind_its_text_names() -> None:
    now = dt.datetime.now(dt.UTC)
    written = dataclasses.replace(record(1, "dns: no such host"), error_kind=ErrorKind.DNS)
    doc = mongo_docs.prepare(written, 1024, 1 << 20, now).page
    assert doc["error_kind"] == "dns"
    assert mongo_docs.record_from_document(doc, None).error_kind is ErrorKind.DNS

    older = {k: v for k, v in doc.items() if k != "error_kind"}
    assert mongo_docs.record_from_document(older, None).error_kind is ErrorKind.DNS
    doc["error_kind"] = None  # written by this nadird without a kind: left as it is
    assert mongo_docs.record_from_document(doc, None).error_kind is None


def test_an_older_spooled_batch_gets_the_kind_its_text_names() -> None:
    older = record(1, "connect: refused")
    written = dataclasses.replace(record(2, "connect: refused"), error_kind=None)
    payload = spool.pack_records([older, written])
    rows = msgpack.unpackb(zlib.decompress(payload))
    del rows["records"][0]["error_kind"]  # as a spool of schema 4 held it
    repacked = zlib.compress(msgpack.packb(rows, use_bin_type=True))

    back = spool.unpack_records(repacked)

    assert [r.error_kind for r in back] == [ErrorKind.CONNECT, None]
