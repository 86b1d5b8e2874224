"""Write stored pages out as JSON Lines or CSV (`nadird export`).

Both formats stream: records come from `Store.iter_records` in chunks and go
straight to `out`, so exporting a large store needs little memory.

CSV is written for spreadsheets and for programs alike: every field of a
record has a column, times are ISO 8601 in UTC, and a list or mapping is one
JSON-encoded cell, so `json.loads` gives back exactly what was stored (a
joined "a|b" could not tell one item containing "|" from two items).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

from nadird.common.errors import StoreError
from nadird.common.record import Cell, facts
from nadird.store.backend import Store
from nadird.store.base import EXPORTED, PageRecord
from nadird.store.cursor import Cursor

ExportFormat = Literal["jsonl", "csv"]

# The record's exported fields (nadird.common.record), each a column; `data`, the
# extracted fields, becomes one column per field instead.
CSV_COLUMNS = tuple(name for name in EXPORTED if name != "data")
TIME_COLUMNS = frozenset(f.name for f, declared in facts(PageRecord) if declared.cell is Cell.TIME)
# utf-8-sig starts the file with a byte order mark: without it Excel reads
# UTF-8 as the local code page (Chinese text turns to mojibake).
CSV_ENCODINGS = ("utf-8", "utf-8-sig", "gb18030")
DATA_PREFIX = "data."


class UnknownField(ValueError):
    """`fields` names a column that neither the records nor their data have."""


async def export_records(
    store: Store,
    out: TextIO,
    fmt: ExportFormat,
    job: str | None = None,
    fields: Sequence[str] | None = None,
) -> int:
    """Write the records of `store` (of one job, if given) to `out`; return the
    row count. `fields` chooses and orders the CSV columns (default: all)."""
    if fmt == "jsonl":
        if fields is not None:
            raise ValueError("fields choose CSV columns; JSON lines always hold every field")
        return await _export_jsonl(store, out, job)
    if fmt == "csv":
        columns = await csv_columns(store, job, fields)
        return await write_csv(store, out, columns, job)
    raise ValueError(f"unknown export format {fmt!r}; expected 'jsonl' or 'csv'")


async def export_to(
    store: Store,
    path: str | None,
    fmt: ExportFormat,
    job: str | None = None,
    fields: Sequence[str] | None = None,
    encoding: str = "utf-8",
    since: float | None = None,
    cursor: Cursor | None = None,
) -> int:
    """export_records into a file (or stdout when `path` is None) in `encoding`;
    with `since`, only the records fetched at or after it (epoch seconds);
    with `cursor`, only those it has not seen (store/cursor.py; saved after).

    The CSV columns are checked before the file is opened: an unknown field
    leaves no empty or half-written file behind.
    """
    wanted = _wanted(since, cursor)
    # The store finds what was fetched since the lower bound (an index on the
    # fetch time); `wanted` then leaves out what the cursor already wrote.
    since = cursor.since if cursor is not None else since
    if fmt == "csv":
        columns = await csv_columns(store, job, fields, since)
        with open_output(path, encoding) as out:
            rows = await write_csv(store, out, columns, job, wanted, since)
    else:
        if fields is not None:
            raise ValueError("fields choose CSV columns; JSON lines always hold every field")
        with open_output(path, encoding) as out:
            rows = await _export_jsonl(store, out, job, wanted, since)
    if cursor is not None:  # once every line is out: a failed export is done again
        cursor.save()
    return rows


Wanted = Callable[[PageRecord], bool] | None


def _wanted(since: float | None, cursor: Cursor | None) -> Wanted:
    if cursor is not None:
        return cursor.wants
    if since is not None:
        return lambda record: record.fetched_at >= since
    return None


async def export_changes(
    store: Store, path: str | None, job: str | None, since: float | None
) -> int:
    """JSON lines of the changes of revisited pages (store/history.py)."""
    changes = getattr(store, "iter_changes", None)
    if changes is None:
        raise StoreError(f"{store!r} keeps no page history")
    count = 0
    with open_output(path, "utf-8") as out:
        async for change in changes(job, since):
            change["time"] = iso_utc(change["time"])
            change["previous_time"] = iso_utc(change["previous_time"])
            out.write(json.dumps(change, ensure_ascii=False) + "\n")
            count += 1
    return count


async def export_items(store: Store, path: str | None, job: str | None) -> int:
    """JSON lines of the keyed items (store/items.py), of one job if given."""
    count = 0
    with open_output(path, "utf-8") as out:
        async for item in store.iter_items(job):
            line = item.export_dict()
            line["first_seen"] = iso_utc(item.first_seen)
            line["updated_at"] = iso_utc(item.updated_at)
            out.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count


@contextlib.contextmanager
def open_output(path: str | None, encoding: str) -> Iterator[TextIO]:
    # newline="": the csv module writes its own line ends.
    if path is not None:
        with open(path, "w", encoding=encoding, newline="") as fh:
            yield fh
        return
    stdout = io.TextIOWrapper(sys.stdout.buffer, encoding=encoding, newline="")
    try:
        yield stdout
    finally:
        stdout.flush()
        stdout.detach()  # sys.stdout keeps its buffer


async def _export_jsonl(
    store: Store, out: TextIO, job: str | None, wanted: Wanted = None, since: float | None = None
) -> int:
    rows = 0
    async for record in store.iter_records(job, since):
        if wanted is not None and not wanted(record):
            continue
        out.write(json.dumps(record.export_dict(), ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        rows += 1
    return rows


async def csv_columns(
    store: Store, job: str | None, fields: Sequence[str] | None = None, since: float | None = None
) -> list[str]:
    """The CSV header: every record column, then one per extracted data field,
    or exactly `fields` when given (UnknownField if one is not among them)."""
    # The header must name every data field before the first row is written,
    # and holding all records to find them would not scale: so read twice.
    names: set[str] = set()
    async for record in store.iter_records(job, since):
        names.update(record.data)
    available = list(CSV_COLUMNS) + [_field_column(name) for name in sorted(names)]
    if fields is None:
        return available
    known = set(available)
    for name in fields:
        if name not in known:
            raise UnknownField(f"unknown field {name!r}; expected some of: {', '.join(available)}")
    return list(fields)


async def write_csv(
    store: Store,
    out: TextIO,
    columns: Sequence[str],
    job: str | None,
    wanted: Wanted = None,
    since: float | None = None,
) -> int:
    # "\n" rather than csv's default "\r\n": `out` is usually stdout or a file
    # read by Unix tools, where "\r\n" would leave a stray "\r"; spreadsheets
    # read both.
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    rows = 0
    async for record in store.iter_records(job, since):
        if wanted is not None and not wanted(record):
            continue
        # A field first written after the header (live store) is left out:
        # the header cannot grow.
        writer.writerow([_cell(column, _value(record, column)) for column in columns])
        rows += 1
    return rows


def _field_column(name: str) -> str:
    # A data field called e.g. "url" must not produce a second "url" column;
    # one already starting with "data." is prefixed too, so that the prefix
    # can always be taken off again.
    return f"{DATA_PREFIX}{name}" if name in CSV_COLUMNS or name.startswith(DATA_PREFIX) else name


def _value(record: PageRecord, column: str) -> Any:
    if column in CSV_COLUMNS:
        return getattr(record, column)
    # Every data column named "data.*" got its prefix from _field_column.
    return record.data.get(column.removeprefix(DATA_PREFIX))


def iso_utc(timestamp: float) -> str:
    """2026-12-01T10:05:00Z; milliseconds only when the time has them."""
    moment = datetime.fromtimestamp(round(timestamp, 3), UTC)
    text = moment.isoformat(timespec="milliseconds").removesuffix("+00:00")
    return text.removesuffix(".000") + "Z"


def _cell(column: str, value: Any) -> str:
    if value is None:
        return ""
    if column in TIME_COLUMNS and isinstance(value, int | float):
        return iso_utc(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool | list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return str(value)
