"""CSV export for spreadsheets and programs, against a real SQLite store:
every field round-trips through Python's csv module, encodings, --fields."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from support import export_csv_helpers
from support.export_csv_helpers import CHINESE, RECORDS, _fill

from nadird.cli.main import main
from nadird.store.base import PageRecord
from nadird.store.export import CSV_COLUMNS, UnknownField, export_records, iso_utc
from nadird.store.sqlite.store import SqliteStore

store_file = export_csv_helpers.store_file


@pytest.fixture
async def store(tmp_path: Path) -> Any:
    opened = await _fill(tmp_path / "crawl.db", RECORDS)
    yield opened
    await opened.close()


def _parse_time(text: str) -> float:
    assert text.endswith("Z")
    return datetime.fromisoformat(text.removesuffix("Z") + "+00:00").timestamp()


def _expected_cell(value: Any) -> Any:
    return "" if value is None else value


def assert_row_is_record(row: dict[str, str], stored: PageRecord) -> None:
    """Read every column of a CSV row back and compare it to the stored record."""
    assert row["url"] == stored.url and row["final_url"] == stored.final_url
    assert int(row["status"]) == stored.status and int(row["depth"]) == stored.depth
    assert row["job"] == stored.job
    assert _parse_time(row["fetched_at"]) == pytest.approx(stored.fetched_at, abs=0.0005)
    for name in ("content_type", "checksum", "error", "canonical"):
        assert row[name] == _expected_cell(getattr(stored, name)), name
    assert json.loads(row["redirects"]) == stored.redirects
    assert json.loads(row["headers"]) == stored.headers
    assert json.loads(row["rendered"]) is stored.rendered
    for name in ("title", "data.url", "data.data.x"):
        value = stored.data.get(name.removeprefix("data."))
        assert row[name] == _expected_cell(value), name
    tags = stored.data.get("tags")
    assert (json.loads(row["tags"]) if row["tags"] else None) == tags


async def test_every_field_round_trips_through_the_csv_module(store: SqliteStore) -> None:
    out = io.StringIO()

    assert await export_records(store, out, "csv") == len(RECORDS)

    rows = list(csv.DictReader(io.StringIO(out.getvalue(), newline="")))
    stored = [r async for r in store.iter_records()]
    assert len(rows) == len(stored) == len(RECORDS)
    header = list(rows[0])
    assert header == [*CSV_COLUMNS, "data.data.x", "tags", "title", "data.url"]
    for row, kept in zip(rows, stored, strict=True):
        assert_row_is_record(row, kept)
    assert rows[0]["fetched_at"] == "2026-12-01T10:05:00Z"
    assert rows[2]["fetched_at"] == "2026-12-01T10:05:02.125Z"


async def test_fields_choose_and_order_the_columns(store: SqliteStore) -> None:
    out = io.StringIO()

    await export_records(store, out, "csv", fields=["title", "url", "redirects"])

    rows = list(csv.reader(io.StringIO(out.getvalue(), newline="")))
    assert rows[0] == ["title", "url", "redirects"]
    assert rows[1][:2] == [CHINESE, RECORDS[0].url]
    assert json.loads(rows[1][2]) == RECORDS[0].redirects


async def test_an_unknown_field_is_refused_before_anything_is_written(store: SqliteStore) -> None:
    out = io.StringIO()
    with pytest.raises(UnknownField, match="'titel'"):
        await export_records(store, out, "csv", fields=["url", "titel"])
    assert out.getvalue() == ""


@pytest.mark.parametrize(
    ("timestamp", "text"),
    [
        (0.0, "1970-01-01T00:00:00Z"),
        (1.5, "1970-01-01T00:00:01.500Z"),
        (0.9999, "1970-01-01T00:00:01Z"),
        (1_796_119_500, "2026-12-01T10:05:00Z"),
    ],
)
def test_times_are_iso_8601_in_utc(timestamp: float, text: str) -> None:
    assert iso_utc(timestamp) == text


@pytest.mark.parametrize(
    ("encoding", "starts_with_bom"),
    [("utf-8", False), ("utf-8-sig", True), ("gb18030", False)],
)
def test_export_command_writes_the_chosen_encoding(
    store_file: Path, tmp_path: Path, encoding: str, starts_with_bom: bool
) -> None:
    out = tmp_path / "pages.csv"
    argv = ["export", "--store", f"sqlite:///{store_file}", "--format", "csv"]

    assert main([*argv, "--encoding", encoding, "--out", str(out)]) == 0

    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") is starts_with_bom
    assert CHINESE.encode(encoding.removesuffix("-sig")) in raw
    with out.open(encoding=encoding, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert next(iter(rows[0])) == "url"  # no BOM glued to the first column's name
    assert [row["title"] for row in rows] == [CHINESE, "", ""]


def test_export_command_refuses_an_unknown_field_with_exit_2(
    store_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pages.csv"
    argv = ["export", "--store", f"sqlite:///{store_file}", "--format", "csv", "--out", str(out)]

    assert main([*argv, "--fields", "url,nope"]) == 2

    assert not out.exists()
    err = capsys.readouterr().err
    assert "--fields: unknown field 'nope'" in err and "title" in err


def test_jsonl_stays_utf_8_without_fields(store_file: Path) -> None:
    argv = ["export", "--store", f"sqlite:///{store_file}", "--format", "jsonl"]
    assert main([*argv, "--encoding", "gb18030"]) == 2
    assert main([*argv, "--fields", "url"]) == 2
