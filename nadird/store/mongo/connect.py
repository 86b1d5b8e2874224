"""Connecting to MongoDB: password source, timeouts, write concern.

Everything PyMongo understands stays in the URI (replica set, TLS, auth
mechanism, read preference...) and is passed through untouched; an option set
in the URI wins over the matching `store.*` key. The password may instead come
from an environment variable or a file, so the config file can be shared.

Error messages go through `redact`: they name the store as
`describe_store_uri` prints it and never carry the password, even when a
driver message would echo part of the URI.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.errors import ConfigurationError, OperationFailure, PyMongoError
from pymongo.write_concern import WriteConcern

from nadird.common.errors import StoreError
from nadird.config import StoreConfig
from nadird.store.uri import UriParts, describe_store_uri

AUTH_FAILED = 18
_MS = 1000
_TIMEOUTS_NOTE = re.compile(r"\s*\(configured timeouts:[^)]*\)")


def read_password(config: StoreConfig) -> str | None:
    """The password from `store.password_env` or `store.password_file`, if either is set."""
    if config.password_env:
        value = os.environ.get(config.password_env)
        if not value:
            raise StoreError(
                f"store.password_env: environment variable {config.password_env} is not set"
            )
        return value
    if config.password_file:
        try:
            with open(config.password_file, encoding="utf-8") as fh:
                value = fh.read().rstrip("\r\n")
        except OSError as exc:
            raise StoreError(
                f"store.password_file: cannot read {config.password_file}: {exc.strerror}"
            ) from None
        if not value:
            raise StoreError(f"store.password_file: {config.password_file} is empty")
        return value
    return None


class Secrets:
    """The secrets of one store, to scrub from any message before it is shown."""

    def __init__(self, *values: str | None) -> None:
        self._values = sorted({v for v in values if v}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, "***")
        return text


def client_options(uri: UriParts, config: StoreConfig, password: str | None) -> dict[str, Any]:
    options: dict[str, Any] = {"tz_aware": True, "appname": "nadird"}
    defaults = {
        "serverselectiontimeoutms": ("serverSelectionTimeoutMS", config.server_selection_timeout),
        "connecttimeoutms": ("connectTimeoutMS", config.connect_timeout),
        # Not timeoutMS: PyMongo lets that one override the (short) server
        # selection timeout, which would slow outage detection down to it.
        "sockettimeoutms": ("socketTimeoutMS", config.operation_timeout),
    }
    for lowered, (name, seconds) in defaults.items():
        if lowered not in uri.options:
            options[name] = int(seconds * _MS)
    if password is not None:
        if uri.user is None:
            raise StoreError(
                "store.password_env/password_file is set but the URI names no user "
                "(expected mongodb://USER@HOST/DB)"
            )
        if uri.password is not None:
            raise StoreError(
                "the URI has a password and store.password_env/password_file is set too"
            )
        options["password"] = password
    return options


def make_client(
    uri: str, parts: UriParts, config: StoreConfig, password: str | None, secrets: Secrets
) -> AsyncMongoClient[dict[str, Any]]:
    options = client_options(parts, config, password)
    try:
        # Does not connect: servers are contacted on first use (open's hello).
        return AsyncMongoClient(uri, **options)
    except (PyMongoError, ValueError, TypeError) as exc:
        raise StoreError(
            f"bad MongoDB URI {describe_store_uri(uri)!r}: {one_line(secrets.redact(str(exc)))}"
        ) from None


def write_concern(
    client: AsyncMongoClient[dict[str, Any]], config: StoreConfig, replicated: bool
) -> tuple[WriteConcern, str | None]:
    """The write concern for batches, and a note when it differs from the config.

    `w` and `journal` given in the URI win; the config fills in the rest.
    """
    document: dict[str, Any] = dict(client.write_concern.document)
    note = None
    if "w" not in document:
        wanted: str | int = config.write_concern
        if isinstance(wanted, str) and wanted.isdigit():
            wanted = int(wanted)
        if wanted == "majority" and not replicated:
            # A standalone server has no majority to wait for; w=1 with the
            # journal is the most it can promise.
            wanted, note = 1, "standalone server: write concern majority -> w=1"
        document["w"] = wanted
    document.setdefault("j", config.journal)
    return WriteConcern(**document), note


def open_error(uri: str, exc: PyMongoError, secrets: Secrets) -> StoreError:
    """A one-line StoreError for a failure to connect at open."""
    where = describe_store_uri(uri)
    if isinstance(exc, OperationFailure) and exc.code == AUTH_FAILED:
        return StoreError(f"MongoDB authentication failed for {where}")
    if isinstance(exc, ConfigurationError):
        return StoreError(f"bad MongoDB URI {where!r}: {one_line(secrets.redact(str(exc)))}")
    # The driver's message ends in a topology dump and its timeout settings:
    # the first clause is the one an operator needs.
    text = secrets.redact(str(exc)).split(", Timeout:")[0]
    text = one_line(_TIMEOUTS_NOTE.sub("", text))
    return StoreError(f"cannot use MongoDB at {where}: {text}")


def one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
