"""URL canonicalization, fingerprints and registrable domains.

Every URL a worker discovers goes through `canonicalize` before the master
dedupes it, so two spellings of one page must collapse to one string, and the
function sits on the hot path of link extraction. Most links are plain ASCII
URLs that need nothing beyond case folding and query sorting; those take a
fast path. Anything unusual (percent-escapes, non-ASCII, dot segments,
userinfo, IPv6, ...) goes through w3lib, whose result the fast path is tested
to reproduce exactly.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import re
from urllib.parse import SplitResult, urlsplit

import tldextract
from w3lib.url import canonicalize_url

from nadird.common.errors import InvalidURL

MAX_URL_LENGTH = 4096

_DEFAULT_PORTS = {"http": 80, "https": 443}

# The shape of an everyday URL whose canonical form needs no percent-encoding
# work: plain hostname, path without escapes, ';' params or brackets, and a
# query made of unreserved characters only (w3lib would escape anything else
# in a query value). The fragment is dropped, so any printable ASCII may follow
# '#'. Anything that does not match takes the general path.
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_FAST_URL = re.compile(
    rf"(?P<scheme>https?)://(?P<host>(?:{_LABEL}\.)*{_LABEL})(?::(?P<port>[0-9]{{1,5}}))?"
    r"(?P<path>/[A-Za-z0-9\-._~!$&'()*+,=:@/]*)?"
    r"(?:\?(?P<query>[A-Za-z0-9\-._~+=&]*))?"
    r"(?:#[\x21-\x7e]*)?",
    re.IGNORECASE,
)

# What a host may look like once w3lib has IDNA-encoded it. '_' is not legal
# in hostnames but real sites use it, so it is tolerated.
_VALID_HOST = re.compile(r"(?:[a-z0-9_-]{1,63}\.)*[a-z0-9_-]{1,63}\.?")


def canonicalize(url: str) -> str:
    """The canonical form of an http(s) URL; raise InvalidURL if it has none.

    Scheme and host are lower-cased (non-ASCII hosts IDNA-encoded), default
    ports and the fragment dropped, query arguments sorted (blank values
    kept), percent-encoding normalized, and an empty path becomes '/'.
    """
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        raise InvalidURL(f"URL longer than {MAX_URL_LENGTH} characters")
    canonical = _canonicalize_fast(url) or _canonicalize_slow(url)
    # Escaping can grow a URL; refusing the result keeps canonicalize idempotent.
    if len(canonical) > MAX_URL_LENGTH:
        raise InvalidURL(f"canonical URL longer than {MAX_URL_LENGTH} characters")
    return canonical


def _canonicalize_fast(url: str) -> str | None:
    """Canonicalize an everyday URL without w3lib, or None if it is not one."""
    match = _FAST_URL.fullmatch(url)
    if match is None:
        return None
    path = match["path"] or "/"
    if "/." in path:
        path = _remove_dot_segments(path)
    query = _sorted_query(match["query"] or "")
    if query is None:
        return None
    scheme = match["scheme"].lower()
    port = _port_suffix(scheme, match["port"])
    if port is None:
        return None
    return f"{scheme}://{match['host'].lower()}{port}{path}{'?' + query if query else ''}"


def _remove_dot_segments(path: str) -> str:
    """'/a/./b/../c' -> '/a/c' (RFC 3986 5.2.4) for an absolute path.

    Relative hrefs ('../list.html') are joined to the page's folder by string
    concatenation, so dot segments are common and must not cost a w3lib call.
    """
    segments = path.split("/")
    kept: list[str] = []
    for segment in segments[1:]:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments[-1] in (".", ".."):
        kept.append("")  # '/a/..' is the folder '/', not the file ''
    return "/" + "/".join(kept)


def _sorted_query(query: str) -> str | None:
    """Sort 'k=v' pairs as w3lib does, or None when a pair needs escaping."""
    pairs: list[tuple[str, str]] = []
    for item in query.split("&"):
        if not item:
            continue
        key, _, value = item.partition("=")
        if "=" in value:  # w3lib escapes a second '=' as %3D
            return None
        pairs.append((key, value))
    pairs.sort()
    return "&".join(f"{key}={value}" for key, value in pairs)


def _port_suffix(scheme: str, port: str | None) -> str | None:
    """':port' unless it is the scheme's default; None if out of range."""
    if port is None:
        return ""
    number = int(port)
    if number > 65535:
        return None
    return "" if number == _DEFAULT_PORTS[scheme] else f":{number}"


def _canonicalize_slow(url: str) -> str:
    """Canonicalize any URL with w3lib, then drop default ports and check the host."""
    try:
        parts = urlsplit(canonicalize_url(url))
        port = parts.port
    except ValueError as exc:  # bad port, bad IPv6 literal, undecodable input
        raise InvalidURL(f"unparsable URL {url[:200]!r}: {exc}") from None
    if parts.scheme not in _DEFAULT_PORTS:
        raise InvalidURL(f"not an http(s) URL: {url[:200]!r}")
    netloc = _netloc(parts, _checked_host(parts.hostname, url), port)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme}://{netloc}{parts.path or '/'}{query}"


def _checked_host(host: str | None, url: str) -> str:
    """The host as it goes into the netloc (IPv6 bracketed); InvalidURL if unusable."""
    if not host:
        raise InvalidURL(f"URL has no host: {url[:200]!r}")
    if ":" in host:
        try:
            return f"[{ipaddress.IPv6Address(host)}]"
        except ValueError:
            raise InvalidURL(f"bad IPv6 host in {url[:200]!r}") from None
    if _VALID_HOST.fullmatch(host) is None:
        raise InvalidURL(f"bad host {host[:100]!r} in {url[:200]!r}")
    return host


def _netloc(parts: SplitResult, host: str, port: int | None) -> str:
    userinfo, at, _ = parts.netloc.rpartition("@")
    suffix = "" if port is None or port == _DEFAULT_PORTS[parts.scheme] else f":{port}"
    return f"{userinfo}{at}{host}{suffix}"


def fingerprint(canonical: str) -> bytes:
    """16-byte identity of a canonical URL: the key of the seen-set and the store."""
    return hashlib.blake2b(canonical.encode(), digest_size=16).digest()


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # Built on first use: loading the suffix list costs ~20 ms, which processes
    # that never look at domains should not pay. No URLs and no cache dir, so it
    # uses the snapshot bundled with tldextract and never touches the network.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@functools.lru_cache(maxsize=65536)
def registrable_domain(host: str) -> str:
    """The registrable domain (eTLD+1) of a host: 'www.bbc.co.uk' -> 'bbc.co.uk'.

    IP addresses map to themselves. A host whose suffix the public suffix list
    does not know ('site-1.test', 'localhost') maps to its last two labels.
    A port, brackets and a trailing dot are ignored.
    """
    host = _bare_host(host)
    if _is_ip_address(host):
        return host
    parts = _extractor()(host)
    if not parts.suffix:
        return ".".join(host.split(".")[-2:])
    if not parts.domain:  # the host is itself a public suffix, e.g. 'co.uk'
        return host
    return f"{parts.domain}.{parts.suffix}"


def _bare_host(host: str) -> str:
    """Lower-case host without port, IPv6 brackets or trailing dot."""
    host = host.strip().lower()
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:  # host:port; more colons mean a bare IPv6 address
        host = host.partition(":")[0]
    return host.rstrip(".")


def _is_ip_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


# A plain http(s) URL's origin (group 1) and host (group 2): a name or IPv4
# address, an optional port, then the end of the authority. Nothing in it
# urlsplit would strip, unquote or take apart differently (userinfo, IPv6,
# whitespace go the slow way).
_PLAIN_ORIGIN = re.compile(r"(https?://([A-Za-z0-9._-]*)(?::[0-9]*)?)(?:[/?#]|\Z)")


def host_of(url: str) -> str:
    """The host of a canonical URL, without port or IPv6 brackets ('' if none).

    Link scope checks call this for every link; one regex match costs a
    tenth of urlsplit on a URL it has not seen.
    """
    plain = _PLAIN_ORIGIN.match(url)
    if plain is None:
        return urlsplit(url).hostname or ""
    return plain[2].lower()


def domain_of(url: str) -> str:
    """The registrable domain of a canonical URL's host."""
    return registrable_domain(host_of(url))


class ParamStripper:
    """Drops tracking and session parameters from canonical URLs.

    A second pass after `canonicalize`, not part of it: canonicalize stays the
    fast, rule-free identity the master also uses for seeds, while each job
    may strip its own list. Names match case-insensitively; 'utm_*' matches
    any name starting with 'utm_'. Query arguments and ';name=value' path
    parameters (';jsessionid=...') are both dropped. The input's order is kept,
    so a canonical URL stays canonical.
    """

    __slots__ = ("_exact", "_prefixes")

    def __init__(self, patterns: list[str]) -> None:
        names = [p.strip().lower() for p in patterns if p.strip()]
        self._exact = frozenset(n for n in names if not n.endswith("*"))
        self._prefixes = tuple(n[:-1] for n in names if n.endswith("*"))

    def _drops(self, name: str) -> bool:
        name = name.lower()
        return name in self._exact or name.startswith(self._prefixes)

    def __call__(self, url: str) -> str:
        if not (self._exact or self._prefixes) or ("?" not in url and ";" not in url):
            return url
        head, _, query = url.partition("?")
        if ";" in head:
            head = self._strip_path_params(head)
        if query:
            kept = [p for p in query.split("&") if not self._drops(p.partition("=")[0])]
            query = "&".join(kept)
        return f"{head}?{query}" if query else head

    def _strip_path_params(self, head: str) -> str:
        scheme, sep, rest = head.partition("://")
        host, slash, path = rest.partition("/")
        segments = []
        for segment in path.split("/"):
            name, *params = segment.split(";")
            kept = [p for p in params if not self._drops(p.partition("=")[0])]
            segments.append(";".join([name, *kept]))
        return f"{scheme}{sep}{host}{slash}{'/'.join(segments)}"


def origin_of(url: str) -> str:
    """'scheme://host[:port]' of a canonical URL: robots.txt is per origin.
    (The master asks for every URL of every bag: a regex match when it can.)"""
    plain = _PLAIN_ORIGIN.match(url)
    if plain is not None:
        return plain[1]
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
