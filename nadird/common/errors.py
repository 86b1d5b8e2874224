"""One exception hierarchy for the whole daemon.

Callers catch the narrowest class that tells them what to do: a ConfigError ends
the process with exit status 2, a ProtocolError drops one message, a FetchError
is recorded against one URL and the crawl goes on.
"""

from __future__ import annotations

import enum


class NadirdError(Exception):
    """Base of every error nadird raises on purpose."""


class ConfigError(NadirdError):
    """A configuration file or option is wrong. Exit status 2.

    The message names the file, the key and what was expected, so one line on
    stderr is enough for an operator to fix it.
    """

    def __init__(self, source: str, key: str, expected: str) -> None:
        self.source = source
        self.key = key
        self.expected = expected
        super().__init__(f"{source}: {key}: {expected}")


class InvalidURL(NadirdError):
    """A URL that cannot be crawled: unparsable, not http(s), no host."""


class ProtocolError(NadirdError):
    """A message on a socket that does not decode or does not validate."""


class ErrorKind(enum.StrEnum):
    """What went wrong with a page, as the worker records it (PageResult and
    the stored record's `error_kind`). A `str` enum: the wire, the stores and
    the export hold the plain name, e.g. "timeout"."""

    TIMEOUT = "timeout"
    CONNECT = "connect"
    DNS = "dns"
    HTTP_ERROR = "http_error"  # the connection broke mid-answer, a malformed response
    PROXY = "proxy"
    BLOCKED_ADDRESS = "blocked_address"
    INVALID_URL = "invalid_url"
    TOO_LARGE = "too_large"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    REDIRECT_LOOP = "redirect_loop"
    CONTENT_ENCODING = "content_encoding"
    ROBOTS = "robots"
    PARSE = "parse"
    RENDER = "render"
    RENDER_TIMEOUT = "render_timeout"
    RENDER_UNAVAILABLE = "render_unavailable"
    INTERNAL = "internal"  # a bug in the worker, caught so that the bag goes on
    # A stored error whose text names no kind this nadird knows (read, never made).
    UNKNOWN = "unknown"

    @property
    def transient(self) -> bool:
        """May go away by itself, so the master tries the URL again; any other
        kind (a policy refusal, an oversize body, a loop, robots.txt) is
        recorded as the page's result at once."""
        return _TRANSIENT[self]

    @classmethod
    def of_message(cls, message: str) -> ErrorKind:
        """The kind an error text written as "kind: detail" names (records
        stored before the kind had a field of its own)."""
        try:
            return cls(message.split(":", 1)[0])
        except ValueError:
            return cls.UNKNOWN


# The kind table: retried (True), or recorded as the page's result (False).
# Every kind is placed here, so a kind added to the enum needs a decision.
_TRANSIENT: dict[ErrorKind, bool] = {
    ErrorKind.TIMEOUT: True,
    ErrorKind.CONNECT: True,
    ErrorKind.DNS: True,
    ErrorKind.HTTP_ERROR: True,
    # No proxy carried it (all the pool's tried failed, or none was usable):
    # another try later may find one that works.
    ErrorKind.PROXY: True,
    ErrorKind.BLOCKED_ADDRESS: False,
    ErrorKind.INVALID_URL: False,
    ErrorKind.TOO_LARGE: False,
    ErrorKind.TOO_MANY_REDIRECTS: False,
    ErrorKind.REDIRECT_LOOP: False,
    ErrorKind.CONTENT_ENCODING: False,
    ErrorKind.ROBOTS: False,
    ErrorKind.PARSE: False,
    ErrorKind.RENDER: False,
    ErrorKind.RENDER_TIMEOUT: False,
    ErrorKind.RENDER_UNAVAILABLE: False,
    ErrorKind.INTERNAL: False,
    ErrorKind.UNKNOWN: False,
}
if set(_TRANSIENT) != set(ErrorKind):
    raise TypeError(f"error kinds without a retry decision: {set(ErrorKind) - set(_TRANSIENT)}")


class FetchError(NadirdError):
    """A page that produced no usable result: DNS, connect, timeout, policy,
    and the later steps (parse, render). The one way the worker builds an
    error: `kind` and `detail` become the result's `error_kind` and `error`."""

    def __init__(self, kind: ErrorKind, detail: str) -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The human-readable form kept in the record's `error`: "kind: detail"."""
        return f"{self.kind}: {self.detail}"


class StoreError(NadirdError):
    """The result store cannot be opened or written."""


class StateError(NadirdError):
    """A state file (snapshot, frontier) is missing parts, corrupt or unreadable."""


class SupersededError(StateError):
    """Another master started from this state's replica after it (a restore
    elsewhere): this state must not hand out work, at start or while it
    runs. Exit status 3, which the shipped unit does not restart."""


class BindError(NadirdError):
    """An address to listen on is taken (another master?) or not available. Exit status 2."""

    def __init__(self, address: str, key: str, reason: str) -> None:
        self.address = address
        super().__init__(f"cannot listen on {address} ({key}): {reason}")
