"""The web console's plumbing: routes, sessions, CSRF, headers, templates.

Served by the management API's server (ApiServer registers it), under /ui.
Pages need a session; a session needs the API token once, pasted into the
login form, and then both its cookie and its origin's key (browser_sessions.py).
A browser's plain navigation carries no key: it gets the shell, a page with
nothing of the master's, whose script asks for the page again with the key
and shows it. With a key but without a live session a page answers 401 with
the login form and nothing else. Every POST form carries the session's CSRF
token: a missing or wrong one gets 403 before anything is done. Wrong tokens
are limited per client address (login_limit.py). Every string shown comes
from catalog.py, in the language language.py picks for the request.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2
from aiohttp import web
from multidict import MultiDictProxy
from prometheus_client import CollectorRegistry, generate_latest

from nadird.common.logs import PerKeyLimit, get_logger
from nadird.master.console import format as fmt
from nadird.master.console.browser_sessions import (
    KEY_HEADER,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    Session,
    Sessions,
    key_form_ok,
    same,
)
from nadird.master.console.language import LANG_COOKIE, Strings, choose, code, language_of_tag, stat
from nadird.master.console.login_limit import LimitCollector, LoginLimit, client_key

if TYPE_CHECKING:
    from nadird.master.view.view import MasterView

log = get_logger()
PREFIX = "/ui"
LANG_COOKIE_AGE = 365 * 86400  # a language chosen with the switch stays a year
STATIC = {  # uplot.*: uPlot 1.6.32 (MIT, static/uplot.LICENSE.txt), the charts' library
    "console.js": "text/javascript",
    "charts.js": "text/javascript",
    "uplot.min.js": "text/javascript",
    "console.css": "text/css",
    "uplot.min.css": "text/css",
}
# Nothing from elsewhere: scripts, styles, images, forms and frames of this origin only.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

NAV = [  # (path under /ui, catalog key)
    ("", "nav.crawl"),
    ("/jobs", "nav.jobs"),
    ("/domains", "nav.domains"),
    ("/workers", "nav.workers"),
    ("/dead-letters", "nav.dead_letters"),
    ("/alerts", "nav.alerts"),
    ("/errors", "nav.errors"),
    ("/changes", "nav.changes"),
]

Page = Callable[[web.Request, Session], Awaitable[web.StreamResponse]]
Action = Callable[[web.Request, Session, Any], Awaitable[web.StreamResponse]]


def owns(path: str) -> bool:
    """Whether a path is the console's (it checks its own sessions)."""
    return path == "/" or path == PREFIX or path.startswith(PREFIX + "/")


class ConsoleApp:
    def __init__(self, master: MasterView, token: str) -> None:
        self.master = master
        self.token = token
        self.sessions = Sessions(master.config.api.session_ttl)
        settings = master.config.console
        self.language = settings.language
        self.limit = LoginLimit(
            settings.login_failures, settings.login_window, settings.login_clients
        )
        self._limited_log = PerKeyLimit(interval=60.0)
        self.metrics = CollectorRegistry(auto_describe=True)
        self.metrics.register(LimitCollector(self.limit))
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("nadird.master.console", "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            finalize=fmt.shown,  # every printed value: crawled text cannot reorder the page
        )
        self.templates.filters.update(fmt.FILTERS)
        self.templates.globals.update(code=code, stat=stat)

    def add_routes(self, app: web.Application) -> None:
        app.middlewares.append(self._error_pages)
        app.router.add_get("/", self.root)
        app.router.add_get(PREFIX + "/", self.root)
        app.router.add_get(PREFIX + "/login", self.login_form)
        app.router.add_post(PREFIX + "/login", self.login)
        app.router.add_post(PREFIX + "/logout", self.action(self.logout))
        app.router.add_get(PREFIX + "/static/{name}", self.static)

    def session_of(self, request: web.Request) -> Session | None:
        """The request's session: its cookie and its origin's key, both right."""
        return self.sessions.get(
            request.cookies.get(SESSION_COOKIE), request.headers.get(KEY_HEADER)
        )

    def strings(self, request: web.Request) -> Strings:
        """The request's language (language.py says how it is chosen)."""
        return Strings(
            choose(
                request.query.get("lang"),
                request.cookies.get(LANG_COOKIE),
                request.headers.get("Accept-Language"),
                self.language,
            )
        )

    def metrics_text(self) -> bytes:
        return generate_latest(self.metrics)

    # ------------------------------------------------------------ wrappers
    def page(self, handler: Page) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        """A page: 401 with the shell to a navigation (no key: whatever the
        cookie, it shows nothing, and console.js asks again with the key);
        401 with the login form without a live session."""

        async def guarded(request: web.Request) -> web.StreamResponse:
            if KEY_HEADER not in request.headers:
                return self.render(request, "shell.html", None, 401)
            session = self.session_of(request)
            if session is None:
                return self._login_page(request, 401, "login.needed")
            try:
                return secured(await handler(request, session))
            except PageError as exc:
                return self.error_page(request, exc.status, exc.key)

        return guarded

    def action(self, handler: Action) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        """A POST form: 401 without a session, 403 without its CSRF token."""

        async def guarded(request: web.Request) -> web.StreamResponse:
            session = self.session_of(request)
            if session is None:
                return self._login_page(request, 401, "login.needed")
            form = await read_form(request)
            if form is None:
                return self.error_page(request, 400, "error.bad_form")
            given = form.get("csrf")
            if not same(given if isinstance(given, str) else None, session.csrf):
                log.warning("console_csrf_refused", path=request.path)
                return self.error_page(request, 403, "error.csrf")
            try:
                return secured(await handler(request, session, form))
            except PageError as exc:
                return self.error_page(request, exc.status, exc.key)

        return guarded

    def render(
        self,
        request: web.Request,
        name: str,
        session: Session | None,
        status: int = 200,
        **context: Any,
    ) -> web.Response:
        """A template in the request's language, with the switch to the other one."""
        strings = self.strings(request)
        other = "en" if strings.language != "en" else "zh-CN"
        template = self.templates.get_template(name)
        notice = self.sessions.take_notice(session.id) if session is not None else None
        html = template.render(
            session=session,
            notice=notice,
            node=self.master.config.node,
            lang=strings.language,
            t=strings.t,
            label=strings.label,
            switch_url=str(request.rel_url.update_query(lang=other)),
            switch_name=Strings(other).text("lang.name"),
            nav=NAV,
            prefix=PREFIX,
            **({"here": None} | context),
        )
        response = web.Response(text=html, status=status, content_type="text/html")
        response.headers["Content-Language"] = strings.language
        response.headers["Vary"] = f"Accept-Language, Cookie, {KEY_HEADER}"
        if language_of_tag(request.query.get("lang", "")) == strings.language:
            # Chosen with the switch link: keep it for the next pages.
            response.set_cookie(
                LANG_COOKIE, strings.language, max_age=LANG_COOKIE_AGE, path="/",
                httponly=True, samesite="Lax",
            )  # fmt: skip
        secured(response)
        return response

    def error_page(self, request: web.Request, status: int, key: str) -> web.Response:
        session = self.session_of(request)
        return self.render(request, "error.html", session, status, error=status, message=key)

    @web.middleware
    async def _error_pages(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """A console path no route has, or a wrong method: the error page, in
        the request's language, instead of aiohttp's plain text."""
        try:
            response: web.StreamResponse = await handler(request)
        except (web.HTTPNotFound, web.HTTPMethodNotAllowed) as exc:
            if not owns(request.path):
                raise
            key = "error.not_found" if exc.status == 404 else "error.not_allowed"
            return self.error_page(request, exc.status, key)
        return response

    # -------------------------------------------------------------- routes
    async def root(self, _request: web.Request) -> web.StreamResponse:
        return redirect(PREFIX, 302)

    async def login_form(self, request: web.Request) -> web.StreamResponse:
        if self.session_of(request) is not None:
            return redirect(PREFIX)
        return self._login_page(request, 200, None)

    def _login_page(
        self, request: web.Request, status: int, message: str | None, **params: object
    ) -> web.Response:
        nonce = self.sessions.login_nonce()
        text = self.strings(request).text(message, **params) if message else None
        # Asking for the token is no error: only a refusal is shown as one.
        prompt = message == "login.needed"
        response = self.render(
            request, "login.html", None, status, nonce=nonce, message=text, prompt=prompt
        )
        response.set_cookie(
            LOGIN_COOKIE, nonce, max_age=600, path=PREFIX, httponly=True, samesite="Strict"
        )
        return response

    async def login(self, request: web.Request) -> web.StreamResponse:
        wait = self.limit.retry_after(request.remote)
        if wait is not None:
            return self._limited(request, wait)
        form = await read_form(request)
        if form is None:
            return self.error_page(request, 400, "error.bad_form")
        nonce, token = form.get("nonce"), form.get("token")
        if not self.sessions.login_nonce_ok(
            nonce if isinstance(nonce, str) else None, request.cookies.get(LOGIN_COOKIE)
        ):
            return self.error_page(request, 403, "error.form_token")
        key = request.headers.get(KEY_HEADER)
        if not key_form_ok(key):  # signed in without console.js: no origin key
            return self._login_page(request, 400, "login.no_key")
        if not same(token.strip() if isinstance(token, str) else None, self.token):
            failures = self.limit.failed(request.remote)
            log.warning(
                "console_login_refused", peer=request.remote, failures=failures,
                limit=self.limit.failures, window=self.limit.window,
            )  # fmt: skip
            return self._login_page(request, 401, "login.wrong")
        self.limit.succeeded(request.remote)
        session = self.sessions.create(key)
        log.info("console_login", peer=request.remote)
        response = redirect(PREFIX)
        response.set_cookie(
            SESSION_COOKIE,
            session.id,
            max_age=int(self.sessions.ttl),
            path="/",
            httponly=True,
            samesite="Strict",
        )
        response.del_cookie(LOGIN_COOKIE, path=PREFIX)
        return secured(response)

    def _limited(self, request: web.Request, wait: float) -> web.Response:
        """429 with Retry-After: the token is not even read."""
        seconds = max(1, math.ceil(wait))
        held_back = self._limited_log.allow(client_key(request.remote), time.monotonic())
        if held_back is not None:  # one line a minute per address, however fast it tries
            log.warning(
                "console_login_limited", peer=request.remote, retry_after=seconds,
                held_back=held_back,
            )  # fmt: skip
        response = self._login_page(request, 429, "login.limited", seconds=seconds)
        response.headers["Retry-After"] = str(seconds)
        return response

    async def logout(
        self, _request: web.Request, session: Session, _form: Any
    ) -> web.StreamResponse:
        self.sessions.drop(session.id)
        response = redirect(PREFIX + "/login")
        response.del_cookie(SESSION_COOKIE, path="/")
        return response

    async def static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        kind = STATIC.get(name)
        if kind is None:
            raise web.HTTPNotFound()
        text = resources.files("nadird.master.console").joinpath("static", name).read_text("utf-8")
        return secured(web.Response(text=text, content_type=kind))


class PageError(Exception):
    """A page or form cannot go on: the error page with `status` and the message `key`."""

    def __init__(self, status: int, key: str) -> None:
        super().__init__(key)
        self.status = status
        self.key = key


async def read_form(request: web.Request) -> MultiDictProxy[Any] | None:
    """The posted form; None for one that cannot be read (a multipart body
    without its boundary, bytes that are not UTF-8, an unknown charset),
    which aiohttp raises as ValueError or LookupError."""
    try:
        return await request.post()
    except (ValueError, LookupError):
        return None


def redirect(location: str, status: int = 303) -> web.StreamResponse:
    """After a form: 303, so that the browser GETs the page again."""
    return secured(web.Response(status=status, headers={"Location": location}))


def secured(response: web.StreamResponse) -> web.StreamResponse:
    response.headers.update(SECURITY_HEADERS)
    return response
