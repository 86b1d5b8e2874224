"""Connection settings of the MongoDB store: URI parts, options, write concern,
password sources, redaction. No server needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from pymongo import AsyncMongoClient

from nadird.common.errors import StoreError
from nadird.config import StoreConfig
from nadird.store.mongo.connect import (
    Secrets,
    client_options,
    read_password,
    write_concern,
)
from nadird.store.uri import describe_store_uri, split_uri


def test_split_uri_finds_user_database_and_option_names() -> None:
    parts = split_uri(
        "mongodb://crawler:p%40ss@a:1,b:2/crawl?replicaSet=rs0&serverSelectionTimeoutMS=9"
    )
    assert (parts.user, parts.password, parts.raw_password) == ("crawler", "p@ss", "p%40ss")
    assert parts.hosts == "a:1,b:2" and parts.database == "crawl"
    assert parts.options == {"replicaset", "serverselectiontimeoutms"}
    assert parts.target == "mongodb://a:1,b:2/crawl"  # no credentials: names the spool's owner


@pytest.mark.parametrize(
    "uri",
    [
        "mongodb://u:s3cret@h/db",
        "mongodb://u:p%40ss@a:1,b:2/db?w=1",
        "MONGODB+SRV://u:x:y@cluster.test",
        "mongodb://a@b:c@h/db",  # the last "@" ends the user info
    ],
)
def test_the_password_connecting_uses_is_the_one_printing_hides(uri: str) -> None:
    parts = split_uri(uri)
    assert parts.raw_password
    shown = describe_store_uri(uri)
    assert parts.raw_password not in shown and "***" in shown
    # Everything else survives as written.
    assert split_uri(shown).hosts == parts.hosts and split_uri(shown).rest == parts.rest


def test_uri_options_win_over_config_timeouts() -> None:
    config = StoreConfig(server_selection_timeout=2.5)
    options = client_options(split_uri("mongodb://h/db?serverSelectionTimeoutMS=9"), config, None)
    assert "serverSelectionTimeoutMS" not in options
    options = client_options(split_uri("mongodb://h/db"), config, None)
    assert options["serverSelectionTimeoutMS"] == 2500
    assert options["socketTimeoutMS"] == 30000 and "timeoutMS" not in options


def test_password_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ND_PW", "from-env")
    assert read_password(StoreConfig(password_env="ND_PW")) == "from-env"
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    assert read_password(StoreConfig(password_file=str(secret))) == "from-file"
    with pytest.raises(StoreError, match="cannot read"):
        read_password(StoreConfig(password_file=str(tmp_path / "missing")))
    with pytest.raises(ValueError, match="at most one"):
        StoreConfig(password_env="ND_PW", password_file=str(secret))
    with pytest.raises(StoreError, match="names no user"):
        client_options(split_uri("mongodb://h/db"), StoreConfig(), "pw")
    with pytest.raises(StoreError, match="has a password"):
        client_options(split_uri("mongodb://u:x@h/db"), StoreConfig(), "pw")


def test_secrets_are_redacted() -> None:
    secrets = Secrets("p@ss", "p%40ss", None)
    assert secrets.redact("auth p@ss and p%40ss failed") == "auth *** and *** failed"


async def test_write_concern_from_config_uri_and_standalone_fallback() -> None:
    config = StoreConfig(write_concern="majority", journal=True)
    client: AsyncMongoClient[dict[str, object]] = AsyncMongoClient("mongodb://h/db", connect=False)
    concern, note = write_concern(client, config, replicated=True)
    assert concern.document == {"w": "majority", "j": True} and note is None
    concern, note = write_concern(client, config, replicated=False)
    assert concern.document == {"w": 1, "j": True} and note is not None
    concern, _ = write_concern(client, StoreConfig(write_concern="2"), replicated=True)
    assert concern.document["w"] == 2
    await client.close()
    client = AsyncMongoClient("mongodb://h/db?w=3&journal=false", connect=False)
    concern, _ = write_concern(client, config, replicated=True)
    assert concern.document == {"w": 3, "j": False}
    await client.close()


@pytest.mark.parametrize(
    "uri",
    [
        "mongodb://crawler:s3cret@db1:27017,db2:27017/nadird",
        "mongodb+srv://crawler:s3cret@cluster.example.net/nadird",
    ],
)
def test_open_store_returns_a_mongo_store_without_connecting(uri: str) -> None:
    from nadird.store.mongo.store import MongoStore
    from nadird.store.open import open_store

    store = open_store(uri)
    assert isinstance(store, MongoStore)
    assert "s3cret" not in repr(store) and "crawler:***@" in repr(store)
