"""Write stored pages out as JSON Lines or CSV (`nadird export`).

Both formats stream: records come from `Store.iter_records` in chunks and go
straight to `out`, so exporting a large store needs little memory.
"""

from __future__ import annotations

import csv
import json
from typing import Any, Literal, TextIO

from nadird.store.base import PageRecord, Store

ExportFormat = Literal["jsonl", "csv"]

CSV_COLUMNS = (
    "url",
    "final_url",
    "status",
    "fetched_at",
    "job",
    "depth",
    "content_type",
    "checksum",
    "error",
)

LIST_SEPARATOR = "|"


async def export_records(
    store: Store, out: TextIO, fmt: ExportFormat, job: str | None = None
) -> int:
    """Write the records of `store` (of one job, if given) to `out`; return the row count."""
    if fmt == "jsonl":
        return await _export_jsonl(store, out, job)
    if fmt == "csv":
        return await _export_csv(store, out, job)
    raise ValueError(f"unknown export format {fmt!r}; expected 'jsonl' or 'csv'")


async def _export_jsonl(store: Store, out: TextIO, job: str | None) -> int:
    rows = 0
    async for record in store.iter_records(job):
        out.write(json.dumps(record.export_dict(), ensure_ascii=False, separators=(",", ":")))
        out.write("\n")
        rows += 1
    return rows


async def _export_csv(store: Store, out: TextIO, job: str | None) -> int:
    # The header must name every data field before the first row is written,
    # and holding all records to find them would not scale: so read twice.
    fields = await _data_fields(store, job)
    header = list(CSV_COLUMNS) + [_field_column(name) for name in fields]
    # "\n" rather than csv's default "\r\n": `out` is usually stdout or a file
    # opened in text mode, where "\r\n" would reach Unix tools as a stray "\r".
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    rows = 0
    async for record in store.iter_records(job):
        writer.writerow(_csv_row(record, fields))
        rows += 1
    return rows


async def _data_fields(store: Store, job: str | None) -> list[str]:
    names: set[str] = set()
    async for record in store.iter_records(job):
        names.update(record.data)
    return sorted(names)


def _field_column(name: str) -> str:
    # A data field called e.g. "url" must not produce a second "url" column.
    return f"data.{name}" if name in CSV_COLUMNS else name


def _csv_row(record: PageRecord, fields: list[str]) -> list[str]:
    fixed = [getattr(record, column) for column in CSV_COLUMNS]
    # A field first written after the first pass (live store) is left out:
    # the header is already written and cannot grow.
    extracted = [record.data.get(name) for name in fields]
    return [_cell(value) for value in fixed + extracted]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return LIST_SEPARATOR.join(_cell(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return str(value)
