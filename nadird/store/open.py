"""Turn a `--store` URI into a Store, and print one safely.

Accepted forms:

- `sqlite:///crawl.db` (relative to the working directory) and
  `sqlite:////var/lib/nadird/crawl.db` (absolute): the same three-slash /
  four-slash convention as SQLAlchemy, so the part after `sqlite:///` is the
  filesystem path as written;
- a bare path ending in .db, .sqlite or .sqlite3, as a shorthand;
- `mongodb://HOST:PORT/DBNAME` and `mongodb+srv://...` (MongoStore; the
  `store.*` MongoDB keys come from `config` when the caller has one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nadird.common.errors import StoreError
from nadird.store.backend import Store
from nadird.store.sqlite.store import SqliteStore
from nadird.store.uri import describe_store_uri

if TYPE_CHECKING:
    from nadird.config import StoreConfig

_SQLITE_PREFIX = "sqlite:///"
_SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_MONGO_SCHEMES = ("mongodb://", "mongodb+srv://")
_ACCEPTED = (
    "sqlite:///relative.db, sqlite:////absolute/path.db, "
    "a path ending in .db/.sqlite/.sqlite3, or mongodb://..."
)


def open_store(uri: str, config: StoreConfig | None = None) -> Store:
    """The store for `uri`, not yet opened (the caller awaits `open()`).

    `config` (the `store` section) carries the MongoDB options; without it
    they take their defaults. SQLite needs nothing beyond the URI.
    """
    lowered = uri.lower()
    if lowered.startswith(_SQLITE_PREFIX):
        return _sqlite_store(uri, uri[len(_SQLITE_PREFIX) :])
    if lowered.startswith(_MONGO_SCHEMES):
        # Imported here: PyMongo is only loaded by processes that use it.
        from nadird.store.mongo.store import MongoStore

        return MongoStore(uri, config)
    if "://" not in uri and lowered.endswith(_SQLITE_SUFFIXES):
        return SqliteStore(uri)
    raise StoreError(f"unsupported store URI {describe_store_uri(uri)!r}; expected {_ACCEPTED}")


def _sqlite_store(uri: str, path: str) -> SqliteStore:
    # Query strings and fragments are not parsed: silently taking "a.db?mode=ro"
    # as a file name would surprise more than a clear error does.
    if not path or path.endswith("/") or "?" in path or "#" in path:
        raise StoreError(f"bad SQLite store URI {uri!r}: expected a file path after sqlite:///")
    return SqliteStore(path)
