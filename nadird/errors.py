"""One exception hierarchy for the whole daemon.

Callers catch the narrowest class that tells them what to do: a ConfigError ends
the process with exit status 2, a ProtocolError drops one message, a FetchError
is recorded against one URL and the crawl goes on.
"""

from __future__ import annotations


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


class FetchError(NadirdError):
    """A fetch that produced no usable response (DNS, connect, timeout, policy)."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}")


class StoreError(NadirdError):
    """The result store cannot be opened or written."""


class StateError(NadirdError):
    """A state file (snapshot, frontier) is missing parts, corrupt or unreadable."""


class BindError(NadirdError):
    """An address to listen on is taken (another master?) or not available. Exit status 2."""

    def __init__(self, address: str, key: str, reason: str) -> None:
        self.address = address
        super().__init__(f"cannot listen on {address} ({key}): {reason}")
