"""How each hop of a fetch is asked for: a request's method, headers and body
on the first, and what a redirect leaves of them for the next."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nadird.job.request import RequestSpec

# Redirects after which a request with a body goes on as a GET without one
# (as browsers and requests do): 303 always, 301/302 after a POST. 307 and
# 308 repeat the method and the body.
_TO_GET = {303: ("POST", "PUT"), 301: ("POST",), 302: ("POST",)}
# Not sent on to another host: they were meant for the first one.
_HOST_BOUND = ("authorization", "cookie")


@dataclass(frozen=True, slots=True)
class Hop:
    """How one hop of a fetch is asked for: the request, then what the
    redirects leave of it."""

    method: str
    headers: Mapping[str, str]
    body: bytes = b""

    @classmethod
    def first(cls, request: RequestSpec | None, conditional: Mapping[str, str] | None) -> Hop:
        if request is None:
            return cls("GET", conditional or {})
        return cls(request.method, {**request.send_headers(), **(conditional or {})}, request.body)

    def cookie(self) -> str | None:
        """The Cookie header the request itself sends on this hop."""
        return next((v for k, v in self.headers.items() if k.lower() == "cookie"), None)

    def next(self, status: int, other_host: bool) -> Hop:
        """The hop after a redirect: validators belong to the first URL only."""
        drop = {"if-none-match", "if-modified-since"}
        if other_host:
            drop.update(_HOST_BOUND)
        method, body = self.method, self.body
        if method in _TO_GET.get(status, ()):
            method, body = "GET", b""
            drop.add("content-type")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in drop}
        return Hop(method, headers, body)
