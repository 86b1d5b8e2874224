"""A job's login (`jobs.J.login`): the request that opens a session, the
accounts it is sent for, and what says a session has expired.

Pure data, checked when the config loads and rebuilt on the worker from the
bag's job (Job.from_wire). Secrets are never here: an account names where its
user and password are (`*_env`, `*_file`), and the worker reads them
(worker/fetch/sessions.py). Only `{user}` and `{password}` placeholders in
the form or JSON values say where they go.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from nadird.job.request import check_headers

# A form or JSON value that is exactly a placeholder takes the secret.
PLACEHOLDERS = ("{user}", "{password}")
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


@dataclass(frozen=True)
class LoginAccount:
    """One account: its user (given, or read from a variable or a file), its
    password (read only), and at most rate_per_minute requests with its session."""

    name: str = ""  # shown in status and logs; account-N (its index) by default
    user: str | None = None
    user_env: str | None = None
    user_file: str | None = None
    password_env: str | None = None
    password_file: str | None = None
    rate_per_minute: float | None = None

    def __post_init__(self) -> None:
        users = [k for k in ("user", "user_env", "user_file") if getattr(self, k) is not None]
        if len(users) != 1:
            raise ValueError("exactly one of user, user_env or user_file")
        if (self.password_env is None) == (self.password_file is None):
            raise ValueError("exactly one of password_env or password_file (never the password)")
        if self.rate_per_minute is not None and self.rate_per_minute <= 0:
            raise ValueError("rate_per_minute must be > 0")
        if self.name and not _NAME.fullmatch(self.name):
            raise ValueError("name: letters, digits, '_', '.', '-' (at most 64)")

    @property
    def interval(self) -> float:
        """Seconds between two requests of this account (0: no limit)."""
        return 60.0 / self.rate_per_minute if self.rate_per_minute else 0.0


@dataclass(frozen=True)
class TokenRule:
    """The session is a token in the login's JSON answer, sent as a header."""

    jmes: str
    header: str = "Authorization"
    prefix: str = "Bearer "

    def __post_init__(self) -> None:
        check_headers({self.header: self.prefix + "x"}, "token.header")
        _check_jmes(self.jmes, "token.jmes")


@dataclass(frozen=True)
class CsrfRule:
    """A token the login form holds (fetched first: `login.prefetch`) and
    the login must send back: found by `css` (its `attr`) in an HTML form
    or by `jmes` in a JSON answer, sent as the form or JSON `field` or as a
    `header`."""

    css: str | None = None
    attr: str = "value"
    jmes: str | None = None
    field: str | None = None
    header: str | None = None

    def __post_init__(self) -> None:
        if (self.css is None) == (self.jmes is None):
            raise ValueError("csrf: exactly one of css or jmes")
        if (self.field is None) == (self.header is None):
            raise ValueError("csrf: exactly one of field or header")
        if self.header is not None:
            check_headers({self.header: "x"}, "csrf.header")
        if self.jmes is not None:
            _check_jmes(self.jmes, "csrf.jmes")


@dataclass(frozen=True)
class ExpiryRule:
    """What says an answer came without a valid session: one of these
    statuses, an HTML page matching `selector` (the login form again), or a
    JSON answer where `jmes` is true."""

    statuses: list[int] = field(default_factory=lambda: [401, 403])
    selector: str | None = None
    jmes: str | None = None

    def __post_init__(self) -> None:
        for i, status in enumerate(self.statuses):
            if not 100 <= status <= 599:
                raise ValueError(f"expired.statuses[{i}]: expected an HTTP status 100-599")
        if self.jmes is not None:
            _check_jmes(self.jmes, "expired.jmes")


@dataclass(frozen=True)
class LoginSpec:
    url: str
    accounts: list[LoginAccount]
    method: Literal["POST", "PUT", "GET"] = "POST"
    form: dict[str, str] | None = None
    json: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    token: TokenRule | None = None  # None: the answer's cookies are the session
    expired: ExpiryRule = field(default_factory=ExpiryRule)
    # A page fetched (GET) before each login: its cookies go with the login
    # and are part of the session; `csrf` takes a token from it.
    prefetch: str | None = None
    csrf: CsrfRule | None = None
    # Failed logins in a row after which the domain rests `pause` seconds
    # (or until resumed); between them it rests 1, 2, 4... seconds.
    max_failures: int = 3
    pause: float = 600.0

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError("login.url: expected an http:// or https:// URL")
        if (self.form is None) == (self.json is None):
            raise ValueError("login: exactly one of form or json")
        if not self.accounts:
            raise ValueError("login.accounts: at least one account")
        if self.max_failures < 1 or self.pause <= 0:
            raise ValueError("login: max_failures must be >= 1 and pause > 0")
        check_headers(self.headers, "login.headers")
        if self.prefetch is not None and not self.prefetch.startswith(("http://", "https://")):
            raise ValueError("login.prefetch: expected an http:// or https:// URL")
        if self.csrf is not None and self.prefetch is None:
            raise ValueError("login.csrf: needs login.prefetch (the page holding the token)")
        names = self.account_names()
        if len(set(names)) != len(names):
            raise ValueError("login.accounts: two accounts of one name")

    def selectors(self) -> list[tuple[str, str]]:
        """The CSS selectors of the login by key, checked when the config loads."""
        found = [("expired.selector", self.expired.selector)]
        if self.csrf is not None:
            found.append(("csrf.css", self.csrf.css))
        return [(key, css) for key, css in found if css is not None]

    def account_names(self) -> list[str]:
        return [a.name or f"account-{i}" for i, a in enumerate(self.accounts)]

    def body(self, user: str, password: str, extra: dict[str, str] | None = None) -> dict[str, Any]:
        """The `form` or `json` key of the login request, placeholders
        filled, `extra` fields (a csrf token) added."""
        values = {"{user}": user, "{password}": password}
        if self.form is not None:
            filled_form = {k: values.get(v, v) for k, v in self.form.items()}
            return {"form": {**filled_form, **(extra or {})}}
        assert self.json is not None
        filled = {k: values.get(v, v) if isinstance(v, str) else v for k, v in self.json.items()}
        return {"json": {**filled, **(extra or {})}}


def _check_jmes(expression: str, key: str) -> None:
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        jmespath.compile(expression)
    except JMESPathError as exc:
        raise ValueError(f"{key}: invalid JMESPath ({exc})") from None
