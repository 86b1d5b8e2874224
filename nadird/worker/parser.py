"""Turning a fetched page into fields and links, with lxml.

A job's selectors run on every page of the job, so each expression is compiled
once and cached. Bad pages never raise: an unparsable body yields no document,
and a document without matches yields None fields and no links. Bad selectors
do raise (ValueError naming the field), but `validate_fields` lets the config
loader catch them before any crawl starts.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

import lxml.html
from cssselect import SelectorError
from lxml import etree
from lxml.cssselect import CSSSelector
from w3lib.encoding import html_to_unicode

from nadird.errors import InvalidURL
from nadird.jobs import LinkRules, Selector
from nadird.urls import canonicalize, domain_of, host_of, registrable_domain

FieldValue = str | list[str] | None

# Schemes whose links can never be fetched; rejecting them by prefix is much
# cheaper than resolving and canonicalizing them only to get InvalidURL.
_UNFOLLOWABLE_PREFIXES = ("javascript:", "mailto:", "tel:", "data:")

# Browsers delete ASCII tabs and newlines anywhere in an href before parsing it
# ('java\tscript:' is javascript:); doing the same first keeps the prefix
# checks below honest.
_TAB_OR_NEWLINE = str.maketrans("", "", "\t\n\r")

# WHATWG MIME sniffing treats a NUL byte as the mark of binary content. It is
# checked after decoding, where UTF-16/32 text no longer has any.
_SNIFF_CHARS = 1024


# --- parsing ---------------------------------------------------------------


def decode_html(body: bytes, encoding: str | None = None) -> str:
    """A body as text, decoded the way browsers choose: BOM, then `encoding`
    (the HTTP header's charset), then <meta charset>, then UTF-8 if it is valid
    UTF-8, else windows-1252. Never raises; bad bytes become U+FFFD.
    """
    header = f"text/html; charset={encoding}" if encoding else None
    return html_to_unicode(header, body, auto_detect_fun=_utf8_or_cp1252)[1]


def _utf8_or_cp1252(body: bytes) -> str:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


def parse_html(body: bytes, url: str, encoding: str | None = None) -> lxml.html.HtmlElement | None:
    """Parse an HTML body; None when it is empty, binary or unparsable.

    `encoding` is the charset from the HTTP header; see `decode_html`.
    """
    if not body or body.isspace():
        return None
    text = decode_html(body, encoding)
    if "\x00" in text[:_SNIFF_CHARS]:
        return None
    try:
        # Decoding is done above, once, with browser rules (libxml2 alone would
        # take undeclared UTF-8 for Latin-1), so lxml gets UTF-8 and is told so.
        # A parser per call: parsers must not be shared between threads, and
        # making one costs ~2 µs against the milliseconds a page takes.
        parser = lxml.html.HTMLParser(encoding="utf-8")
        return lxml.html.document_fromstring(text.encode("utf-8"), parser=parser, base_url=url)
    except (etree.LxmlError, ValueError):
        return None


def content_checksum(body: bytes) -> str:
    """Hex blake2b-128 of a body: lets the store spot unchanged pages."""
    return hashlib.blake2b(body, digest_size=16).hexdigest()


# --- field extraction ------------------------------------------------------

_Compiled = etree.XPath | re.Pattern[str]


@functools.lru_cache(maxsize=1024)
def _compile_xpath(expr: str) -> etree.XPath:
    # Plain strings: "smart" ones keep a reference to their node, and so the tree.
    return etree.XPath(expr, smart_strings=False)


@functools.lru_cache(maxsize=1024)
def _compile_css(expr: str) -> etree.XPath:
    # The 'html' translator matches element names case-insensitively, as HTML does.
    return CSSSelector(expr, translator="html")


@functools.lru_cache(maxsize=1024)
def _compile_regex(expr: str) -> re.Pattern[str]:
    return re.compile(expr)


def _expression(sel: Selector) -> tuple[str, str]:
    """(kind, expression) of a selector; Selector guarantees exactly one is set."""
    if sel.xpath is not None:
        return "xpath", sel.xpath
    if sel.css is not None:
        return "css", sel.css
    return "regex", sel.regex or ""


def _compile(sel: Selector, where: str) -> _Compiled:
    kind, expr = _expression(sel)
    try:
        if kind == "xpath":
            return _compile_xpath(expr)
        if kind == "css":
            return _compile_css(expr)
        return _compile_regex(expr)
    except (etree.XPathError, SelectorError, re.error) as exc:
        raise ValueError(f"{where}: invalid {kind} {expr!r}: {exc}") from None


def _values(
    sel: Selector, doc: lxml.html.HtmlElement | None, raw_text: str, where: str
) -> Iterator[str]:
    """Every value the selector yields on the page, empty ones included, lazily."""
    compiled = _compile(sel, where)
    if isinstance(compiled, re.Pattern):
        return _regex_values(compiled, raw_text)
    if doc is None:
        return iter(())
    try:
        result = compiled(doc)
    except etree.XPathError as exc:  # e.g. an unknown function or namespace prefix
        kind, expr = _expression(sel)
        raise ValueError(f"{where}: cannot evaluate {kind} {expr!r}: {exc}") from None
    return _xpath_values(result, sel.attr)


def _regex_values(pattern: re.Pattern[str], text: str) -> Iterator[str]:
    group = 1 if pattern.groups else 0
    for match in pattern.finditer(text):
        value = match.group(group)
        if value is not None:  # an optional group that did not take part
            yield value.strip()


def _xpath_values(result: object, attr: str | None) -> Iterator[str]:
    """Strings from an XPath result, rendered as XPath's string() would."""
    if isinstance(result, list):
        for item in result:
            yield _item_text(item, attr)
    elif isinstance(result, bool):
        yield "true" if result else "false"
    elif isinstance(result, float):
        # NaN is what XPath gives for a number of nothing: treat it as no match
        # so the next selector gets its turn.
        if result == result:
            yield str(int(result)) if result.is_integer() else repr(result)
    elif isinstance(result, str):
        yield result.strip()


def _item_text(item: object, attr: str | None) -> str:
    if isinstance(item, etree._Element):
        if attr is not None:
            return (item.get(attr) or "").strip()
        return _normalized_text(item)
    return str(item).strip()


def _normalized_text(element: etree._Element) -> str:
    if isinstance(element, lxml.html.HtmlMixin):
        text = element.text_content()
    else:
        text = element.text or ""
    return " ".join(text.split())


def _extract_field(
    doc: lxml.html.HtmlElement | None, raw_text: str, name: str, selectors: list[Selector]
) -> FieldValue:
    """The first selector with a non-empty result wins; later ones are fallbacks."""
    for i, sel in enumerate(selectors):
        found = (v for v in _values(sel, doc, raw_text, f"fields.{name}[{i}]") if v)
        if sel.multiple:
            values = list(found)
            if values:
                return values
        else:
            value = next(found, None)
            if value is not None:
                return value
    return None


def extract_fields(
    doc: lxml.html.HtmlElement | None, raw_text: str, fields: dict[str, list[Selector]]
) -> dict[str, FieldValue]:
    """Each field's value: a string, a list (multiple=True) or None if nothing matched.

    Regex selectors run on `raw_text` and still work when `doc` is None.
    """
    return {name: _extract_field(doc, raw_text, name, sels) for name, sels in fields.items()}


@functools.cache
def _probe_document() -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring("<html><body><p>probe</p></body></html>")


def validate_fields(fields: dict[str, list[Selector]]) -> None:
    """Compile and trial-run every selector; ValueError('fields.NAME[i]: ...') on the first bad one.

    The trial run on a tiny document catches what compiling alone does not
    (unknown XPath functions, namespace prefixes, variables).
    """
    for name, selectors in fields.items():
        for i, sel in enumerate(selectors):
            where = f"fields.{name}[{i}]"
            kind, expr = _expression(sel)
            if not expr.strip():
                raise ValueError(f"{where}: empty {kind} expression")
            if sel.attr is not None and kind == "regex":
                raise ValueError(f"{where}: attr applies to xpath and css, not regex")
            list(_values(sel, _probe_document(), "", where))


# --- link discovery --------------------------------------------------------


def extract_links(
    doc: lxml.html.HtmlElement | None, page_url: str, respect_nofollow: bool = False
) -> list[str]:
    """Canonical URLs of the page's <a>/<area> links, deduped, in document order.

    Relative links resolve against <base href> if the page has one. Links back
    to the page itself and to unfetchable schemes are left out.
    """
    if doc is None:
        return []
    resolve = _Resolver(_base_url(doc, page_url))
    seen_hrefs: set[str] = set()
    # After a redirect the page URL may be unknown to the master; a self-link
    # ('#top', a logo link) would then get the same page fetched again.
    page = _canonical_or_none(page_url)
    seen: set[str] = {page} if page is not None else set()
    links: list[str] = []
    for element in doc.iter("a", "area"):
        href = _followable_href(element, respect_nofollow)
        # Pages repeat the same hrefs (menus, footers): skip them before paying
        # for resolution and canonicalization.
        if href is None or href in seen_hrefs:
            continue
        seen_hrefs.add(href)
        url = resolve(href)
        if url is not None and url not in seen:
            seen.add(url)
            links.append(url)
    return links


def base_url(doc: lxml.html.HtmlElement, page_url: str) -> str:
    """The URL relative references of the page resolve against (<base href> aware)."""
    return _base_url(doc, page_url)


def _base_url(doc: lxml.html.HtmlElement, page_url: str) -> str:
    """The page URL, or the first <base href> resolved against it if that is http(s)."""
    base = doc.find(".//base[@href]")
    if base is None:
        return page_url
    href = (base.get("href") or "").strip()
    try:
        resolved = urljoin(page_url, href)
    except ValueError:
        return page_url
    return resolved if resolved.lower().startswith(("http://", "https://")) else page_url


def _followable_href(element: etree._Element, respect_nofollow: bool) -> str | None:
    href = (element.get("href") or "").translate(_TAB_OR_NEWLINE).strip()
    if not href or href.lower().startswith(_UNFOLLOWABLE_PREFIXES):
        return None
    if respect_nofollow and "nofollow" in (element.get("rel") or "").lower().split():
        return None
    return href


def _origin(base: str) -> str | None:
    """'scheme://netloc' of the base URL, or None if it has none."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else None


def _folder(base: str, origin: str | None) -> str | None:
    """The base URL up to the last '/' of its path: what a relative path
    ('page-2.html', 'a/b') is appended to. None when the base is unusual."""
    if origin is None or not base.startswith(origin):
        return None
    rest = base[len(origin) :]
    end = len(rest)
    for stop in "?#":
        found = rest.find(stop, 0, end)
        if found >= 0:
            end = found
    slash = rest.rfind("/", 0, end)
    return origin + (rest[: slash + 1] if slash >= 0 else "/")


class _Resolver:
    """Hrefs of one page -> canonical absolute URLs (None if they have none).

    urljoin costs more than canonicalizing, so the commonest shapes skip it:
    '/path' is appended to the origin, a relative path without a scheme to
    the base's folder, and an absolute http(s) URL is taken as is. Dot
    segments urljoin would have resolved, canonicalize resolves.
    """

    __slots__ = ("_base", "_folder", "_origin")

    def __init__(self, base: str) -> None:
        self._base = base
        self._origin = _origin(base)
        self._folder = _folder(base, self._origin)

    def __call__(self, href: str) -> str | None:
        first = href[:1]
        if first == "/":
            if self._origin is not None and not href.startswith("//"):
                return _canonical_or_none(self._origin + href)
        elif first not in ("?", "#", ";", "") and self._folder is not None and ":" not in href:
            # No ':' at all, so no scheme: a relative path (RFC 3986 4.2).
            # (urljoin reads a leading ';' as parameters of the base's path.)
            return _canonical_or_none(self._folder + href)
        elif href[:8].lower().startswith(("http://", "https://")):
            return _canonical_or_none(href)
        try:
            absolute = urljoin(self._base, href)
        except ValueError:  # a bad IPv6 literal
            return None
        return _canonical_or_none(absolute)


def _canonical_or_none(url: str) -> str | None:
    try:
        return canonicalize(url)
    except InvalidURL:
        return None


# --- link filtering --------------------------------------------------------


class LinkFilter:
    """Which discovered links a job follows, seen from pages of one domain.

    Build one per (job, page domain) and reuse it: patterns are compiled here.
    `seed_domain` may be a host or a registrable domain; "same-domain" compares
    registrable domains. Raises ValueError naming the rule that is invalid.
    """

    __slots__ = ("_allow", "_allowed_domains", "_deny", "_domain", "_follow", "_scope")

    def __init__(self, rules: LinkRules, seed_domain: str) -> None:
        if rules.scope not in ("same-domain", "allowed-domains", "any"):
            raise ValueError(f"links.scope: unknown scope {rules.scope!r}")
        self._follow = rules.follow
        self._scope = rules.scope
        self._domain = registrable_domain(seed_domain)
        self._allowed_domains = frozenset(
            _allowed_domain(entry, i) for i, entry in enumerate(rules.allowed_domains)
        )
        self._allow = _compile_patterns(rules.allow, "links.allow")
        self._deny = _compile_patterns(rules.deny, "links.deny")

    def allowed(self, url: str) -> bool:
        """True if the canonical URL is in scope, matches an allow pattern and no deny one."""
        return (
            self._follow
            and self._in_scope(url)
            and (not self._allow or any(p.search(url) for p in self._allow))
            and not any(p.search(url) for p in self._deny)
        )

    def _in_scope(self, url: str) -> bool:
        if self._scope == "any":
            return True
        if self._scope == "same-domain":
            return domain_of(url) == self._domain
        return _host_in(host_of(url), self._allowed_domains)


def validate_link_rules(rules: LinkRules) -> None:
    """Raise ValueError('links....: ...') if the rules cannot build a LinkFilter."""
    LinkFilter(rules, "example.com")


def _compile_patterns(patterns: list[str], where: str) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for i, pattern in enumerate(patterns):
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"{where}[{i}]: invalid regex {pattern!r}: {exc}") from None
    return tuple(compiled)


def _allowed_domain(entry: str, index: int) -> str:
    """An allowed_domains entry as it appears in canonical URLs: lower-case, ASCII."""
    domain = entry.strip().lower().removeprefix("*.").strip(".[]")
    if not domain or "/" in domain:
        raise ValueError(f"links.allowed_domains[{index}]: expected a domain name, got {entry!r}")
    try:
        return domain.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise ValueError(f"links.allowed_domains[{index}]: bad domain {entry!r}: {exc}") from None


def _host_in(host: str, domains: frozenset[str]) -> bool:
    """True if the host or one of its parent domains is listed."""
    if host in domains:
        return True
    # Parents of an IP address are not domains: '0.0.1' is no parent of '10.0.0.1'.
    if ":" in host or host.rpartition(".")[2].isdigit():
        return False
    while (dot := host.find(".")) != -1:
        host = host[dot + 1 :]
        if host in domains:
            return True
    return False
