"""Store URIs taken apart once: for connecting, and for printing safely.

`split_uri` gives the parts MongoDB's connection code needs (user, password,
hosts, database, option names); `describe_store_uri` rebuilds a URI with the
password replaced by *** for logs and error messages. Both read the same
`UriParts`, so what is hidden is exactly what is used as the password.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from nadird.common.errors import StoreError


@dataclass(frozen=True)
class UriParts:
    scheme: str  # as written
    raw_user: str | None  # as written (percent-encoded); None without "@"
    raw_password: str | None  # as written; None without ":" in the user info
    hosts: str
    rest: str  # from the "/" after the hosts on, as written ("" when none)

    @property
    def user(self) -> str | None:
        return unquote(self.raw_user) if self.raw_user is not None else None

    @property
    def password(self) -> str | None:
        return unquote(self.raw_password) if self.raw_password is not None else None

    @property
    def database(self) -> str:
        return unquote(self.rest[1:].partition("?")[0])

    @property
    def options(self) -> frozenset[str]:
        """Option names in the query string, lower-cased."""
        query = self.rest.partition("?")[2]
        return frozenset(part.partition("=")[0].lower() for part in re.split("[&;]", query) if part)

    @property
    def target(self) -> str:
        """Where records go, without credentials or options (names the spool's owner)."""
        return f"{self.scheme.lower()}://{self.hosts}/{self.database}"


def parse_uri(uri: str) -> UriParts | None:
    """The parts of `uri`; None when it has no "scheme://"."""
    scheme, sep, after = uri.partition("://")
    if not sep:
        return None
    # The authority ends at the first "/" after the scheme (mongodb allows
    # several comma-separated hosts in it, so urllib's host parsing is avoided).
    authority, slash, tail = after.partition("/")
    # A literal "@" in a password must be percent-encoded, so the last "@"
    # is the one that ends the user info.
    userinfo, at, hosts = authority.rpartition("@")
    raw_user = raw_password = None
    if at:
        raw_user, colon, secret = userinfo.partition(":")
        raw_password = secret if colon else None
    return UriParts(scheme, raw_user, raw_password, hosts, slash + tail)


def split_uri(uri: str) -> UriParts:
    """The parts of a MongoDB URI; StoreError when it has no scheme."""
    parts = parse_uri(uri)
    if parts is None:
        raise StoreError(f"bad MongoDB URI {uri!r}: no scheme")
    return parts


def describe_store_uri(uri: str) -> str:
    """`uri` with any password replaced by ***, for logs and error messages."""
    parts = parse_uri(uri)
    if parts is None or parts.raw_password is None:
        return uri
    return f"{parts.scheme}://{parts.raw_user}:***@{parts.hosts}{parts.rest}"
