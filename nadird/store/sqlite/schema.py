"""The SQLite `pages` table, derived from the record's declaration.

Each PageRecord field is one column: its type, NOT NULL and DEFAULT come from
the field's Fact and default (nadird.common.record), its encoding (JSON text, 0/1,
zlib) from the Fact's cell. An older store is brought up to date by adding
the declared columns its table lacks, so a new field needs no hand-written
migration; `since` on each Fact gives the schema version, which keeps an
older nadird from writing rows without the columns it does not know.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import zlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from nadird.common.errors import ErrorKind, StoreError
from nadird.common.record import Cell, default_of, facts, has_default
from nadird.store.base import PageRecord
from nadird.store.sqlite.items import SCHEMA as ITEMS_SCHEMA

_ZLIB_LEVEL = 6

Convert = Callable[[Any], Any]


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _compress(value: bytes) -> bytes:
    return zlib.compress(value, _ZLIB_LEVEL)


_SQL_TYPES = {
    Cell.TEXT: "TEXT",
    Cell.INTEGER: "INTEGER",
    Cell.BLOB: "BLOB",
    Cell.BOOL: "INTEGER",
    Cell.JSON: "TEXT",
    Cell.TIME: "REAL",
    Cell.ZLIB: "BLOB",
}
# (to the cell, back to Python) for the cells SQLite does not hold as they are.
_CODECS: dict[Cell, tuple[Convert, Convert]] = {
    Cell.BOOL: (int, bool),
    Cell.JSON: (_json_text, json.loads),
    Cell.ZLIB: (_compress, zlib.decompress),
}


def _literal(value: Any) -> str:
    """An SQL literal for a column DEFAULT."""
    if isinstance(value, bool | int | float):
        return repr(int(value) if isinstance(value, bool) else value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise TypeError(f"no SQL literal for {value!r}")


def _definition(f: dataclasses.Field[Any], cell: Cell, key: bool) -> str:
    sql = f"{f.name} {_SQL_TYPES[cell]}"
    if key:
        return sql + " PRIMARY KEY"
    if not has_default(f):
        return sql + " NOT NULL"
    default = default_of(f)
    if default is None:
        return sql
    encode = _CODECS.get(cell, (None, None))[0]
    return f"{sql} NOT NULL DEFAULT {_literal(encode(default) if encode else default)}"


def _columns() -> tuple[tuple[str, str, int], ...]:
    """(name, definition, schema version that added it) per record field."""
    found = []
    for f, declared in facts(PageRecord):
        definition = _definition(f, declared.cell, declared.key)
        if declared.since > 1 and (declared.key or definition.endswith("NOT NULL")):
            # ALTER TABLE cannot add a key, nor a NOT NULL column without a default.
            raise TypeError(f"PageRecord.{f.name}: a field added later needs a default")
        found.append((f.name, definition, declared.since))
    return tuple(found)


COLUMNS = _columns()
NAMES = tuple(name for name, _, _ in COLUMNS)
SCHEMA_VERSION = max(since for _, _, since in COLUMNS)

_TABLE = ",\n    ".join(definition for _, definition, _ in COLUMNS)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pages (
    {_TABLE}
);
CREATE INDEX IF NOT EXISTS pages_job ON pages (job);
-- What was fetched since a time (export --since, --cursor); made at the
-- first open of an older store too.
CREATE INDEX IF NOT EXISTS pages_fetched_at ON pages (fetched_at);
"""

_Row = tuple[Any, ...]
_values = attrgetter(*NAMES)
# (position, name, cell, conversion) for the columns that need one; the others
# go to SQLite and come back as they are.
_ENCODE = tuple(
    (i, f.name, d.cell, _CODECS[d.cell][0])
    for i, (f, d) in enumerate(facts(PageRecord))
    if d.cell in _CODECS
)
_DECODE = tuple(
    (i, _CODECS[d.cell][1]) for i, (f, d) in enumerate(facts(PageRecord)) if d.cell in _CODECS
)


def to_row(record: PageRecord) -> _Row:
    row = list(_values(record))
    for i, name, cell, encode in _ENCODE:
        if row[i] is not None:
            try:
                row[i] = encode(row[i])
            except (TypeError, ValueError) as exc:
                raise StoreError(
                    f"record for {record.url}: {name} is not {cell.value}: {exc}"
                ) from exc
    return tuple(row)


def from_row(row: _Row) -> PageRecord:
    values = list(row)
    for i, decode in _DECODE:
        if values[i] is not None:
            values[i] = decode(values[i])
    return PageRecord(*values)


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Create the tables, or bring an older store's up to SCHEMA_VERSION.

    Version 7 added keyed items: the `keyed_items` table (created here like
    the others, empty: an older store's pages were stored without keys) and
    the `item_key` and `fallback_from` columns."""
    conn.executescript(SCHEMA + ITEMS_SCHEMA)
    conn.execute(
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
        (str(SCHEMA_VERSION),),
    )
    if _version(conn, path) == SCHEMA_VERSION and not _missing(conn):
        return
    # The columns and the version move together: a crash between them would
    # leave a store that claims columns it does not have.
    conn.execute("BEGIN IMMEDIATE")
    try:
        _version(conn, path)  # again, under the lock: another process may have done it
        for definition in _missing(conn):
            conn.execute(f"ALTER TABLE pages ADD COLUMN {definition}")
            _backfill(conn, definition.split(" ", 1)[0])
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),)
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _backfill(conn: sqlite3.Connection, column: str) -> None:
    """Fill a column just added to an older table from what its rows hold."""
    if column == "error_kind":
        # Rows stored before the kind had a column name it in the text,
        # "kind: detail"; the same reading as for an older worker's results.
        conn.create_function("nadird_error_kind", 1, _kind_of_text, deterministic=True)
        conn.execute(
            "UPDATE pages SET error_kind = nadird_error_kind(error) WHERE error IS NOT NULL"
        )


def _kind_of_text(error: str) -> str:
    return ErrorKind.of_message(error).value


def _version(conn: sqlite3.Connection, path: str) -> int:
    (found,) = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if not (isinstance(found, str) and found.isdigit() and 1 <= int(found) <= SCHEMA_VERSION):
        raise StoreError(f"{path}: schema version {found}, this nadird reads {SCHEMA_VERSION}")
    return int(found)


def _missing(conn: sqlite3.Connection) -> list[str]:
    """Definitions of the declared columns the pages table lacks."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(pages)")}
    return [definition for name, definition, _ in COLUMNS if name not in present]
