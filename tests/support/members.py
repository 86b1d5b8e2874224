"""A login-protected section of the synthetic web, on any host:

  GET  /members/login          the login form (<form id=login>)
  POST /members/login          form user, password: 302 to /members/ with
                               Set-Cookie sid=...; wrong: the form again
  POST /members/api/login      JSON {user, password}: {"token": ...}; wrong: 401
  GET  /members/csrf/login     a login form with a hidden field csrf, and
                               Set-Cookie csrftoken=... (paired with it)
  POST /members/csrf/login     as /members/login, but 403 unless the form's
                               csrf matches the csrftoken cookie sent
  GET  /members/p/N            page N (0..pages-1), linking to N+1 and N+2;
                               needs a session (cookie sid, or the header
                               Authorization: Bearer TOKEN), else a 302 to the
                               login form (cookie) or a 401 (a bad token);
                               sets a cookie owner=USER (the account's own)

Sessions expire when the test says so (`expire_all`), or once, on their own,
after `expire_after` pages served in all. The site keeps its own log of who
logged in (`logins`) and of which account each page request carried
(`served`), so a test can count logins per account and see which client
(worker) used which session.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass
from urllib.parse import parse_qsl

from aiohttp import web

from nadird.testing.access import arrival_time
from nadird.testing.web import SyntheticWeb

PREFIX = "/members"
LOGIN_FORM = (
    '<form id=login method=post action="/members/login">'
    "<input name=user><input name=password type=password></form>"
)


@dataclass(frozen=True)
class Login:
    user: str
    client: str
    ok: bool
    session: str  # the sid or token handed out ("" when refused)
    t: float


@dataclass(frozen=True)
class Served:
    path: str
    client: str
    user: str | None  # the account whose valid session came with it (None: none)
    session: str  # the sid or token the request carried ("" if none)
    t: float
    owner: str = ""  # the owner cookie it carried: set by a page served to that account


class MembersArea:
    def __init__(
        self, accounts: dict[str, str], pages: int = 30, expire_after: int | None = None
    ) -> None:
        self.accounts = accounts
        self.pages = pages
        self.expire_after = expire_after
        self.sessions: dict[str, str] = {}  # valid sid/token -> user
        self.logins: list[Login] = []
        self.served: list[Served] = []
        self.csrf: dict[str, str] = {}  # csrftoken cookie -> the form's token
        self.csrf_refused = 0  # logins without the right token and cookie
        self._lock = threading.Lock()  # the test thread reads while the server writes

    def install(self, server: SyntheticWeb) -> None:
        server.add_route(PREFIX, self.route, methods=frozenset({"POST"}))

    def expire_all(self) -> None:
        with self._lock:
            self.sessions.clear()

    def ok_logins(self) -> list[Login]:
        with self._lock:
            return [entry for entry in self.logins if entry.ok]

    def served_log(self) -> list[Served]:
        with self._lock:
            return list(self.served)

    async def route(self, request: web.Request, host: str) -> web.StreamResponse:
        path = request.path
        if path == f"{PREFIX}/login":
            if request.method == "POST":
                return await self._form_login(request)
            return _page(LOGIN_FORM)
        if path == f"{PREFIX}/csrf/login":
            if request.method == "POST":
                return await self._csrf_login(request)
            return self._csrf_form()
        if path == f"{PREFIX}/api/login" and request.method == "POST":
            return await self._json_login(request)
        if path.startswith(f"{PREFIX}/p/"):
            return self._member_page(request, path)
        return web.Response(status=404, text="404\n")

    async def _form_login(self, request: web.Request) -> web.StreamResponse:
        fields = dict(parse_qsl((await request.read()).decode(), keep_blank_values=True))
        sid = self._open(fields.get("user", ""), fields.get("password", ""), request)
        if sid is None:
            return _page(f"<p class=error>wrong user or password</p>{LOGIN_FORM}")
        response = web.Response(status=302, headers={"Location": f"{PREFIX}/"})
        response.set_cookie("sid", sid, httponly=True, path="/")
        return response

    def _csrf_form(self) -> web.Response:
        cookie, token = secrets.token_hex(8), secrets.token_hex(8)
        with self._lock:
            self.csrf[cookie] = token
        hidden = f'<input type=hidden name=csrf value="{token}">'
        response = _page(LOGIN_FORM.replace("</form>", f"{hidden}</form>"))
        response.set_cookie("csrftoken", cookie, path=PREFIX)
        return response

    async def _csrf_login(self, request: web.Request) -> web.StreamResponse:
        body = (await request.read()).decode()
        token = dict(parse_qsl(body, keep_blank_values=True)).get("csrf", "")
        with self._lock:
            expected = self.csrf.pop(request.cookies.get("csrftoken", ""), None)
            if expected is None or token != expected:
                self.csrf_refused += 1
                return web.Response(status=403, text="csrf token missing or wrong\n")
        return await self._form_login(request)

    async def _json_login(self, request: web.Request) -> web.StreamResponse:
        try:
            data = json.loads(await request.read())
            user, password = str(data["user"]), str(data["password"])
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "user and password wanted"}, status=400)
        token = self._open(user, password, request)
        if token is None:
            return web.json_response({"error": "wrong user or password"}, status=401)
        return web.json_response({"auth": {"token": token}})

    def _open(self, user: str, password: str, request: web.Request) -> str | None:
        ok = self.accounts.get(user) == password and bool(password)
        session = secrets.token_hex(16) if ok else ""
        with self._lock:
            if ok:
                self.sessions[session] = user
            self.logins.append(Login(user, request.remote or "", ok, session, time.time()))
        return session if ok else None

    def _member_page(self, request: web.Request, path: str) -> web.StreamResponse:
        bearer = request.headers.get("Authorization", "")
        carried = bearer.removeprefix("Bearer ") if bearer else request.cookies.get("sid", "")
        with self._lock:
            user = self.sessions.get(carried)
            owner = request.cookies.get("owner", "")
            arrived = arrival_time(request, time.time())  # not the handler's own, lagging start
            served = Served(path, request.remote or "", user, carried, arrived, owner)
            self.served.append(served)
            if self.expire_after is not None and len(self.served) >= self.expire_after:
                self.expire_after = None  # once
                self.sessions.clear()
        if user is None:
            if bearer:
                return web.json_response({"error": "session expired"}, status=401)
            return web.Response(status=302, headers={"Location": f"{PREFIX}/login"})
        try:
            number = int(path.rsplit("/", 1)[1])
        except ValueError:
            return web.Response(status=404, text="404\n")
        if not 0 <= number < self.pages:
            return web.Response(status=404, text="404\n")
        links = "".join(
            f'<a href="{PREFIX}/p/{n}">page {n}</a>'
            for n in (number + 1, number + 2)
            if n < self.pages
        )
        response = _page(f"<h1 class=title>members page {number}</h1>{links}")
        response.set_cookie("owner", user, path=PREFIX)
        return response


def _page(body: str) -> web.Response:
    return web.Response(text=f"<html><body>{body}</body></html>", content_type="text/html")
