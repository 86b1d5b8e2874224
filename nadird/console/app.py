"""The web console's plumbing: routes, sessions, CSRF, headers, templates.

Served by the management API's server (ApiServer registers it), under /ui.
Pages need a session; a session needs the API token once, pasted into the
login form. Without one a page answers 401 with the login form and nothing
else. Every POST form carries the session's CSRF token: a missing or wrong
one gets 403 before anything is done.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

import jinja2
from aiohttp import web

from nadird.console import format as fmt
from nadird.console.sessions import LOGIN_COOKIE, SESSION_COOKIE, Session, Sessions, same
from nadird.logs import get_logger

if TYPE_CHECKING:
    from nadird.master.service.view import MasterView

log = get_logger()
PREFIX = "/ui"
STATIC = {"console.js": "text/javascript", "console.css": "text/css"}
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
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("nadird.console", "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.templates.filters.update(fmt.FILTERS)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/", self.root)
        app.router.add_get(PREFIX + "/login", self.login_form)
        app.router.add_post(PREFIX + "/login", self.login)
        app.router.add_post(PREFIX + "/logout", self.action(self.logout))
        app.router.add_get(PREFIX + "/static/{name}", self.static)

    def session_of(self, request: web.Request) -> Session | None:
        return self.sessions.get(request.cookies.get(SESSION_COOKIE))

    # ------------------------------------------------------------ wrappers
    def page(self, handler: Page) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        """A page: 401 with the login form without a live session."""

        async def guarded(request: web.Request) -> web.StreamResponse:
            session = self.session_of(request)
            if session is None:
                return self._login_page(request, 401, "Paste the API token to sign in.")
            return secured(await handler(request, session))

        return guarded

    def action(self, handler: Action) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        """A POST form: 401 without a session, 403 without its CSRF token."""

        async def guarded(request: web.Request) -> web.StreamResponse:
            session = self.session_of(request)
            if session is None:
                return self._login_page(request, 401, "Paste the API token to sign in.")
            form = await request.post()
            given = form.get("csrf")
            if not same(given if isinstance(given, str) else None, session.csrf):
                log.warning("console_csrf_refused", path=request.path)
                return secured(web.Response(status=403, text="403: missing or wrong CSRF token"))
            return secured(await handler(request, session, form))

        return guarded

    def render(
        self, name: str, session: Session | None, status: int = 200, **context: Any
    ) -> web.Response:
        template = self.templates.get_template(name)
        notice = self.sessions.take_notice(session.id) if session is not None else None
        html = template.render(
            session=session, notice=notice, node=self.master.config.node, **context
        )
        response = web.Response(text=html, status=status, content_type="text/html")
        secured(response)
        return response

    # -------------------------------------------------------------- routes
    async def root(self, _request: web.Request) -> web.StreamResponse:
        return redirect(PREFIX, 302)

    async def login_form(self, request: web.Request) -> web.StreamResponse:
        if self.session_of(request) is not None:
            return redirect(PREFIX)
        return self._login_page(request, 200, None)

    def _login_page(self, _request: web.Request, status: int, message: str | None) -> web.Response:
        nonce = self.sessions.login_nonce()
        response = self.render("login.html", None, status, nonce=nonce, message=message)
        response.set_cookie(
            LOGIN_COOKIE, nonce, max_age=600, path=PREFIX, httponly=True, samesite="Strict"
        )
        return response

    async def login(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        nonce, token = form.get("nonce"), form.get("token")
        if not self.sessions.login_nonce_ok(
            nonce if isinstance(nonce, str) else None, request.cookies.get(LOGIN_COOKIE)
        ):
            return secured(web.Response(status=403, text="403: missing or wrong form token"))
        if not same(token.strip() if isinstance(token, str) else None, self.token):
            log.warning("console_login_refused", peer=request.remote)
            return self._login_page(request, 401, "Wrong token.")
        session = self.sessions.create()
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
        text = resources.files("nadird.console").joinpath("static", name).read_text("utf-8")
        return secured(web.Response(text=text, content_type=kind))


def redirect(location: str, status: int = 303) -> web.StreamResponse:
    """After a form: 303, so that the browser GETs the page again."""
    return secured(web.Response(status=status, headers={"Location": location}))


def secured(response: web.StreamResponse) -> web.StreamResponse:
    response.headers.update(SECURITY_HEADERS)
    return response
