"""Console sessions: a random id in an HttpOnly, SameSite=Strict cookie, and
a key that only the console's own origin holds, the session itself (expiry,
the key's digest, CSRF token) kept by the master in memory.

The cookie alone is not enough. Browsers send a host's cookies to every port
of it (and SameSite counts every loopback port as one site), so any server on
another port of 127.0.0.1 gets the cookie when a page makes the browser ask
it. The key is made by the console's script at sign-in, kept in the origin's
localStorage (which no other port can read) and sent in the KEY_HEADER
header, which a page of another origin cannot add to a request to this one
(a CORS preflight the master never answers). Every page, form and API read
of a session needs both.

A session starts when the API token is pasted into the login form and ends
at logout, at expiry, or when the master stops (sessions are not saved: a
restarted master asks for the token again). Every form carries the
session's CSRF token, compared in constant time. The login form, before any
session exists, carries a signed nonce that must equal its cookie's.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard

SESSION_COOKIE = "nadird_session"
KEY_HEADER = "X-Nadird-Console-Key"
# 32 random bytes in base64url, as console.js makes it; bounded both ways.
KEY_FORM = re.compile(r"[A-Za-z0-9_-]{43,128}")
LOGIN_COOKIE = "nadird_login"
MAX_SESSIONS = 256  # the oldest goes when a new one would pass this
LOGIN_NONCE_TTL = 600.0  # seconds a login form stays usable

Clock = Callable[[], float]


@dataclass(frozen=True)
class Session:
    id: str
    csrf: str
    expires: float  # clock time
    key: bytes  # the digest of the origin's key it was opened with


def key_form_ok(key: str | None) -> TypeGuard[str]:
    """Whether a key sent at sign-in looks like one console.js makes."""
    return key is not None and KEY_FORM.fullmatch(key) is not None


def same(given: str | None, expected: str) -> bool:
    """Constant-time equality of two tokens; a missing one is never equal.

    Their digests are compared, not the tokens: compare_digest returns at
    once on a length mismatch, which would tell a guesser the token's length."""
    if given is None:
        return False
    return hmac.compare_digest(_digest(given), _digest(expected))


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class Sessions:
    def __init__(self, ttl: float, clock: Clock = time.time) -> None:
        self.ttl = ttl
        self._clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._notices: dict[str, str] = {}  # what the last action did, shown once
        self._key = secrets.token_bytes(32)  # signs login nonces; new at each start

    def __len__(self) -> int:
        return len(self._sessions)

    def create(self, key: str) -> Session:
        """A session for the origin holding `key` (see the module's docstring)."""
        self._expire()
        session = Session(
            secrets.token_urlsafe(32),
            secrets.token_urlsafe(32),
            self._clock() + self.ttl,
            _digest(key),
        )
        self._sessions[session.id] = session
        while len(self._sessions) > MAX_SESSIONS:
            oldest, _ = self._sessions.popitem(last=False)
            self._notices.pop(oldest, None)
        return session

    def get(self, session_id: str | None, key: str | None) -> Session | None:
        """The live session of a cookie's id and the origin's key; None for a
        missing, unknown or expired one, or a key that is not its own."""
        if not session_id or key is None:
            return None
        session = self._sessions.get(session_id)
        if session is None or not hmac.compare_digest(_digest(key), session.key):
            return None
        if session.expires <= self._clock():
            self.drop(session_id)
            return None
        return session

    def drop(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._notices.pop(session_id, None)

    def notify(self, session_id: str, text: str) -> None:
        if session_id in self._sessions:
            self._notices[session_id] = text

    def take_notice(self, session_id: str) -> str | None:
        return self._notices.pop(session_id, None)

    def _expire(self) -> None:
        now = self._clock()
        for sid in [sid for sid, s in self._sessions.items() if s.expires <= now]:
            self.drop(sid)

    # Login forms: a nonce signed with this process's key, in a cookie and in
    # the form; both must be equal and the signature good.
    def login_nonce(self) -> str:
        stamp = f"{secrets.token_urlsafe(16)}.{int(self._clock())}"
        return f"{stamp}.{self._sign(stamp)}"

    def login_nonce_ok(self, form: str | None, cookie: str | None) -> bool:
        if form is None or cookie is None or not same(form, cookie):
            return False
        stamp, _, signature = form.rpartition(".")
        _, _, issued = stamp.rpartition(".")
        if not same(signature, self._sign(stamp)) or not issued.isdigit():
            return False
        return self._clock() - int(issued) < LOGIN_NONCE_TTL

    def _sign(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()
