"""A job's login sessions as one bag uses them (see nadird/job/login.py).

The bag brings each account's current session (cookies or a token) from
the master. Every request of the bag goes out under one account: the one
whose rate (`rate_per_minute`) lets it go first, logging in when it has no
session yet. An answer that says the session expired (a status, a selector,
a JSON field) makes the account log in again once (lanes that saw the same
expired session wait for that login instead of making their own), and the
page is asked again. The worker reports the sessions back in BagDone, so the
next bag of the domain, on any worker, uses them.

With `login.prefetch`, each login first GETs that page (the form) in a jar
of its own and sends its cookies and csrf token with the login; the session
is then every cookie of that jar (login_form.py). With the job's cookie jar
on, each account's pages have a jar of their own too (cookies.py): the
session's cookies win over the jar's.

Secrets (users, passwords) are read from the worker's environment or files
when first needed and kept in memory only: never logged, never in a result.
The login's answer is not a page: nothing of it is stored.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import jmespath
from lxml.cssselect import CSSSelector

from nadird.common.errors import ConfigError, FetchError
from nadird.common.logs import get_logger
from nadird.job.login import LoginAccount, LoginSpec
from nadird.job.request import RequestError, RequestSpec, parse
from nadird.protocol.messages import SessionNote
from nadird.worker.fetch.cookies import DomainJar, login_jar
from nadird.worker.fetch.fetcher import Fetcher, FetchOutcome
from nadird.worker.fetch.login_form import prefetch
from nadird.worker.parse.jsonsources import is_json_type, load_json
from nadird.worker.parse.parser import parse_html

log = get_logger()


class LoginFailed(Exception):
    """No account of the bag has a session and none could log in."""


class SecretReader:
    """Users and passwords from the worker's environment or files, read once."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str | None, str | None], str] = {}

    def read(self, key: str, file: str | None, env: str | None) -> str:
        from nadird.config.secrets import read_secret

        cached = self._values.get((key, file, env))
        if cached is None:
            cached = read_secret("login", key, file, env) or ""
            self._values[(key, file, env)] = cached
        return cached

    def credentials(self, account: LoginAccount) -> tuple[str, str]:
        user = account.user
        if user is None:
            user = self.read("user", account.user_file, account.user_env)
        return user, self.read("password", account.password_file, account.password_env)


@dataclass
class AccountState:
    name: str
    account: LoginAccount
    note: SessionNote | None  # None: no session (yet)
    next_at: float  # monotonic: the account's rate allows a request from then on
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    failed: bool = False  # its login failed during this bag: not used again in it
    version: int = 0  # the newest version this account's session had


Turn = Callable[[], Awaitable[None]]
JarOf = Callable[[str], DomainJar]  # an account's jar, by account name


class BagSessions:
    """The sessions of one bag's (job, domain); `fetch` is the fetcher's,
    with the session of an account on the request."""

    def __init__(
        self,
        spec: LoginSpec,
        notes: list[SessionNote],
        fetcher: Fetcher,
        secrets: SecretReader,
        turn: Turn,
        where: dict[str, str],  # job and domain, for the log
        use_proxy: bool = True,
        jars: JarOf | None = None,  # None: the job keeps no cookie jar
    ) -> None:
        self.spec = spec
        self._jars = jars
        self._fetcher = fetcher
        self._secrets = secrets
        self._turn = turn
        self._where = where
        self._use_proxy = use_proxy
        now = time.monotonic()
        given = {n.account: n for n in notes}
        self.accounts = []
        for name, account in zip(spec.account_names(), spec.accounts, strict=True):
            note = given.get(name)
            rest = note.rest if note is not None else 0.0
            state = AccountState(name, account, note, now + rest)
            state.version = note.version if note is not None else 0
            self.accounts.append(state)
        rule = spec.expired
        self._selector = CSSSelector(rule.selector) if rule.selector else None
        self._expired_jmes = jmespath.compile(rule.jmes) if rule.jmes else None
        self._token_jmes = jmespath.compile(spec.token.jmes) if spec.token else None
        self.failures = 0  # logins that failed during this bag
        self.error = ""  # why the last one failed (no secret in it)
        self.logins = 0

    async def fetch(
        self, url: str, request: RequestSpec | None = None, **options: Any
    ) -> FetchOutcome:
        """Fetch under an account's session; once more after a new login when
        the answer says the session expired. LoginFailed when no account can."""
        state = await self._account()
        assert state.note is not None
        seen = state.note.version
        outcome = await self._send(url, request, state, options)
        if not self.expired(outcome):
            return outcome
        log.info("session_expired", **self._where, account=state.name, url=url)
        await self._login(state, seen)
        if state.note is None:  # that login failed: another account, if any, asks
            state = await self._account()
        await self._slot(state)
        return await self._send(url, request, state, options)

    async def _send(
        self, url: str, request: RequestSpec | None, state: AccountState, options: dict[str, Any]
    ) -> FetchOutcome:
        """The fetch under the account's session, and its jar if the job keeps one."""
        if self._jars is not None:
            options = {**options, "jar": self._jars(state.name)}
        return await self._fetcher.fetch(url, request=self._dressed(url, request, state), **options)

    def notes(self) -> list[SessionNote]:
        """Every account's session as the bag leaves it, for BagDone."""
        now = time.monotonic()
        return [
            dataclasses.replace(s.note, rest=round(max(0.0, s.next_at - now), 3))
            for s in self.accounts
            if s.note is not None
        ]

    def expired(self, outcome: FetchOutcome) -> bool:
        """Whether an answer says it came without a valid session."""
        rule = self.spec.expired
        if outcome.status in rule.statuses:
            return True
        if self._selector is not None and outcome.content_type in ("text/html", None):
            doc = parse_html(outcome.body, outcome.final_url, outcome.charset)
            if doc is not None and self._selector(doc):
                return True
        if self._expired_jmes is not None and is_json_type(outcome.content_type):
            try:
                return bool(self._expired_jmes.search(load_json(outcome.body)))
            except ValueError:
                return False
        return False

    async def _account(self) -> AccountState:
        """The usable account whose rate lets it go first, its slot taken,
        logged in if it had no session."""
        while True:
            usable = [s for s in self.accounts if not s.failed]
            if not usable:
                raise LoginFailed(self.error or "no account could log in")
            state = min(usable, key=lambda s: s.next_at)
            if state.note is None:
                await self._login(state, None)
                if state.note is None:
                    continue
            await self._slot(state)
            return state

    async def _slot(self, state: AccountState) -> None:
        """Take the account's next request slot, waiting for it."""
        now = time.monotonic()
        start = max(now, state.next_at)
        state.next_at = start + state.account.interval
        if start > now:
            await asyncio.sleep(start - now)

    async def _login(self, state: AccountState, seen: int | None) -> None:
        """Log the account in, unless another lane renewed the session it saw."""
        async with state.lock:
            if state.failed or (state.note is not None and state.note.version != seen):
                return
            state.note = None
            try:
                note = await self._open(state)
            except (FetchError, ConfigError, RequestError, ValueError) as exc:
                self.failures += 1
                self.error = f"account {state.name}: {_why(exc)}"
                state.failed = True
                log.warning("login_failed", **self._where, account=state.name, why=_why(exc))
                return
            state.note, state.version = note, note.version
            self.logins += 1
            log.info("logged_in", **self._where, account=state.name, version=note.version)

    async def _open(self, state: AccountState) -> SessionNote:
        spec = self.spec
        user, password = self._secrets.credentials(state.account)
        jar = None
        fields: dict[str, str] = {}
        headers: dict[str, str] = {}
        if spec.prefetch is not None:
            jar = login_jar(spec.url, self._fetcher.config.cookie_jars)
            fields, headers = await prefetch(self._fetcher, spec, jar, self._turn, self._use_proxy)
        asked: dict[str, Any] = {
            "url": spec.url,
            "method": spec.method,
            "headers": {**spec.headers, **headers},
        }
        request = parse({**asked, **spec.body(user, password, fields)})
        await self._turn()
        # Not followed: a redirect after the login would go without the new
        # cookies; the answer itself must carry the session.
        outcome = await self._fetcher.fetch(
            spec.url, request=request, max_redirects=0, use_proxy=self._use_proxy, jar=jar
        )
        if outcome.status >= 400 or self.expired(outcome):
            raise ValueError(f"the login was answered {outcome.status} without a session")
        cookies, token = outcome.cookies if jar is None else jar.values(), ""
        if self._token_jmes is not None:
            found = self._token_jmes.search(load_json(outcome.body))
            if not isinstance(found, str) or not found:
                raise ValueError("the login's answer holds no token at login.token.jmes")
            token, cookies = found, {}
        elif not cookies:
            raise ValueError(f"the login was answered {outcome.status} without a cookie")
        return SessionNote(state.name, state.version + 1, dict(cookies), token)

    def _dressed(self, url: str, request: RequestSpec | None, state: AccountState) -> RequestSpec:
        """The request with the account's session cookies or token header."""
        spec = request or RequestSpec(url)
        note = state.note
        assert note is not None
        rule = self.spec.token
        if rule is None or not note.token:
            return dataclasses.replace(spec, cookies={**spec.cookies, **note.cookies})
        name = rule.header.lower()
        headers = {k: v for k, v in spec.headers.items() if k.lower() != name}
        headers[rule.header] = rule.prefix + note.token
        return dataclasses.replace(spec, headers=headers)


def _why(exc: Exception) -> str:
    """A failure's text for the log and status: kinds and statuses, never a
    request body (which holds the password)."""
    if isinstance(exc, FetchError):
        return f"{exc.kind}: {exc.message[:200]}"
    if isinstance(exc, ConfigError):
        return f"{exc.key}: {exc.expected}"
    return str(exc)[:300]
