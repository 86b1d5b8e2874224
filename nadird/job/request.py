"""A request to crawl: the URL, and how to ask for it.

Users write requests in the shape Python users know from `requests`:

    {"url": "http://shop.test/search", "method": "POST",
     "headers": {"X-Token": "abc"}, "cookies": {"region": "eu"},
     "form": {"q": "kettle", "page": 1},      # or "json": {...},
                                              # or "body": "...", "content_type": "..."
     "meta": {"query": "kettle"}}

`parse` checks that shape and builds a `RequestSpec`; everything wrong is a
`RequestError` naming the key (`headers.X-Token`, `json`, `method`), which the
config loader, the seeds file reader and the API turn into their own errors.
The spec travels as `to_wire()` (a small map with only what differs from a
plain GET) in the frontier (`queue.request`, msgpack) and in bags; a plain GET
travels as nothing at all, so the common case costs nothing.

The body is kept in canonical form (request_body.py), and that is what is
sent: form fields sorted by name, JSON with sorted keys and no spaces. So two
spellings of one request are one request, for the fingerprint and on the
wire alike.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack

from nadird.common.urls import canonicalize
from nadird.common.urls import fingerprint as url_fingerprint
from nadird.job.request_body import (
    MAX_BODY_BYTES,
    RequestError,
    body_fields,
    body_of,
    canonical_json,
    kind_of,
    mapping_of,
    media_type,
    string_of,
    text_of,
    with_body_field,
)

__all__ = [
    "METHODS",
    "USER_KEYS",
    "RequestError",
    "RequestSpec",
    "check_cookies",
    "check_headers",
    "check_meta",
    "check_wire",
    "link_fields",
    "pack_wire",
    "parse",
    "unpack_wire",
]

METHODS = ("GET", "POST", "PUT", "HEAD")
USER_KEYS = ("url", "method", "headers", "cookies", "json", "form", "body", "content_type", "meta")
# Bounds that keep a bag (up to bag_size requests) far below a frame's limit.
MAX_META_BYTES = 64 * 1024
MAX_HEADERS = 64
MAX_HEADER_VALUE = 8192
# Set by the fetcher from the spec itself (body, cookies) or by the
# connection: a user's value would contradict it.
RESERVED_HEADERS = {
    "host": "set from the URL",
    "content-length": "set from the body",
    "transfer-encoding": "set from the body",
    "content-type": "give content_type with body (json and form set their own)",
    "cookie": "give cookies instead",
}
# RFC 9110 token characters: what a header or cookie name may hold.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


@dataclass(frozen=True, slots=True)
class RequestSpec:
    url: str
    method: str = "GET"
    headers: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    body: bytes = b""  # canonical (see the module docstring)
    content_type: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def plain(self) -> bool:
        """A GET with nothing else: stored and sent as a bare URL, as always."""
        return self.method == "GET" and not (self.headers or self.cookies or self.body or self.meta)

    def fingerprint(self) -> bytes:
        """The request's identity: the key of the seen set and of the store.

        A GET without a body is its URL's fingerprint, as it always was (so
        stored data and seen sets stay valid). Anything else adds the method,
        the body's media type and the canonical body. Headers, cookies and
        meta are left out: they say how to ask or what to remember, not what
        is asked for (a changed token or session cookie must not make a page
        new, and a page found twice with different meta is still one page).
        """
        if self.method == "GET" and not self.body:
            return url_fingerprint(self.url)
        digest = hashlib.blake2b(digest_size=16)
        for part in (self.method, self.url, media_type(self.content_type)):
            digest.update(part.encode())
            digest.update(b"\0")
        digest.update(self.body)
        return digest.digest()

    def canonical(self) -> RequestSpec:
        """The spec with its URL canonical; InvalidURL if it has none."""
        url = canonicalize(self.url)
        return self if url == self.url else dataclasses.replace(self, url=url)

    def to_wire(self) -> dict[str, Any] | None:
        """What differs from a plain GET of the URL (which travels beside
        it); None for a plain GET."""
        if self.plain:
            return None
        wire: dict[str, Any] = {"method": self.method} if self.method != "GET" else {}
        for name in ("headers", "cookies", "body", "content_type", "meta"):
            value = getattr(self, name)
            if value:
                wire[name] = value
        return wire

    @classmethod
    def from_wire(cls, url: str, wire: Mapping[str, Any] | None) -> RequestSpec:
        """The spec of `url` from `to_wire()`; ValueError if malformed."""
        if not wire:
            return cls(url)
        check_wire(wire)
        return cls(url, **wire)

    def pack(self) -> bytes | None:
        """The frontier's `request` cell: msgpack of to_wire(), NULL for a plain GET."""
        return pack_wire(self.to_wire())

    @classmethod
    def unpack(cls, url: str, packed: bytes | None) -> RequestSpec:
        return cls.from_wire(url, unpack_wire(packed))

    def with_defaults(self, headers: Mapping[str, str], cookies: Mapping[str, str]) -> RequestSpec:
        """The spec with a job's default headers and cookies under its own
        (a header of the spec replaces the job's of the same name, any case)."""
        if not (headers or cookies):
            return self
        own = {name.lower() for name in self.headers}
        merged = {k: v for k, v in headers.items() if k.lower() not in own} | self.headers
        return dataclasses.replace(self, headers=merged, cookies={**cookies, **self.cookies})

    def fields(self) -> dict[str, Any] | None:
        """The body's form fields or JSON object keys (None: no such body)."""
        return body_fields(self.body, self.content_type) if self.body else None

    def with_field(self, name: str, value: Any) -> RequestSpec:
        """The same request with body field `name` set (see fields())."""
        body = with_body_field(self.body, self.content_type, name, value)
        return dataclasses.replace(self, body=body)

    def send_headers(self) -> dict[str, str]:
        """The request headers the spec adds: its own, Cookie, Content-Type."""
        sent = dict(self.headers)
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if self.body or self.content_type:
            sent["Content-Type"] = self.content_type
        return sent


def pack_wire(wire: Mapping[str, Any] | None) -> bytes | None:
    """RequestSpec.pack() of a to_wire() map, without building the spec."""
    return None if not wire else bytes(msgpack.packb(wire, use_bin_type=True))


def unpack_wire(packed: bytes | None) -> dict[str, Any] | None:
    """The to_wire() map of a RequestSpec.pack() (None for a plain GET)."""
    if packed is None:
        return None
    wire: dict[str, Any] = msgpack.unpackb(packed, raw=False)
    return wire


def link_fields(urls: Sequence[str], requests: Sequence[RequestSpec] = ()) -> dict[str, Any]:
    """A PageResult's `links`, `link_fps` and `link_requests` for the plain
    links a page led to and the requests it calls for (a next page as a
    POST...), all with canonical URLs. The master admits both alike."""
    links = list(urls)
    fps = [url_fingerprint(url) for url in links]
    wires: list[dict[str, Any] | None] = []
    if requests:
        wires = [None] * len(links)
        for spec in requests:
            links.append(spec.url)
            fps.append(spec.fingerprint())
            wires.append(spec.to_wire())
    return {"links": links, "link_fps": fps, "link_requests": wires if any(wires) else []}


# ------------------------------------------------------------ the user shape
def parse(data: Any) -> RequestSpec:
    """A spec from the user shape (see the module docstring). The URL is kept
    as given: the caller canonicalizes it (a bad URL is refused where URLs
    are, e.g. listed per item by the API, not as a malformed request)."""
    if isinstance(data, str):
        return RequestSpec(data)
    if not isinstance(data, Mapping):
        raise RequestError("(request)", f"expected a URL or a mapping, got {kind_of(data)}")
    unknown = [k for k in data if k not in USER_KEYS]
    if unknown:
        expected = ", ".join(USER_KEYS)
        raise RequestError(str(unknown[0]), f"unknown key; expected one of: {expected}")
    if "url" not in data:
        raise RequestError("url", "required")
    url = string_of(data["url"], "url")
    method = _method(data.get("method", "GET"))
    headers = check_headers(data.get("headers", {}), "headers")
    cookies = check_cookies(data.get("cookies", {}), "cookies")
    body, content_type = body_of(data, method)
    meta = check_meta(data.get("meta", {}), "meta")
    return RequestSpec(url, method, headers, cookies, body, content_type, meta)


def _method(value: Any) -> str:
    method = string_of(value, "method").upper()
    if method not in METHODS:
        raise RequestError("method", f"expected one of {', '.join(METHODS)}, got {value!r:.40}")
    return method


def check_headers(value: Any, key: str) -> dict[str, str]:
    """Header names are tokens, values strings without control characters
    (a newline would let a value start a header of its own)."""
    headers: dict[str, str] = {}
    raw = mapping_of(value, key)
    if len(raw) > MAX_HEADERS:
        raise RequestError(key, f"at most {MAX_HEADERS} headers")
    for name, text in raw.items():
        where = f"{key}.{name}"
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise RequestError(where, "a header name is a token (letters, digits, !#$%&'*+-.^_`|~)")
        reserved = RESERVED_HEADERS.get(name.lower())
        if reserved is not None:
            raise RequestError(where, f"not allowed: {reserved}")
        text_of(text, where, MAX_HEADER_VALUE)
        headers[name] = text
    return headers


def check_cookies(value: Any, key: str) -> dict[str, str]:
    cookies: dict[str, str] = {}
    for name, text in mapping_of(value, key).items():
        where = f"{key}.{name}"
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise RequestError(where, "a cookie name is a token (letters, digits, !#$%&'*+-.^_`|~)")
        text_of(text, where, MAX_HEADER_VALUE)
        if ";" in text:
            raise RequestError(where, "a cookie value may not hold ';'")
        cookies[name] = text
    return cookies


def check_meta(value: Any, key: str) -> dict[str, Any]:
    meta = dict(mapping_of(value, key))
    canonical_json(meta, key, MAX_META_BYTES)
    return meta


# ------------------------------------------------------------ the wire shape
_WIRE_TYPES: dict[str, type] = {
    "method": str,
    "headers": dict,
    "cookies": dict,
    "body": bytes,
    "content_type": str,
    "meta": dict,
}


def check_wire(wire: Mapping[str, Any]) -> None:
    """Refuse a to_wire() map a peer could have made up (ValueError): unknown
    keys, wrong types, header injection, sizes beyond the bounds."""
    for key, value in wire.items():
        expected = _WIRE_TYPES.get(key)
        if expected is None or type(value) is not expected:
            raise RequestError(key, "not a request field of the expected type")
    _method(wire.get("method", "GET"))
    check_headers(wire.get("headers", {}), "headers")
    check_cookies(wire.get("cookies", {}), "cookies")
    text_of(wire.get("content_type", ""), "content_type", 256)
    if len(wire.get("body", b"")) > MAX_BODY_BYTES:
        raise RequestError("body", f"more than {MAX_BODY_BYTES} bytes")
    check_meta(wire.get("meta", {}), "meta")
