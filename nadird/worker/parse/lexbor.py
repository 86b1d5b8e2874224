"""A page parsed by Lexbor (selectolax): what a job without lxml needs of it.

Jobs whose rules Lexbor can answer (job/parser_choice.py decides, once per
job) have their pages parsed here instead of by lxml: a third to a half of
the time for the parse and the link walk together. Lexbor builds the tree the
HTML standard prescribes, the one browsers build; where libxml2 repairs
broken markup otherwise, this tree is the one a browser user sees.

The body is decoded before, by the same rules as for lxml (parser.py's
`decode_html`), so both parsers read the same text.
"""

from __future__ import annotations

from collections.abc import Iterator

from selectolax.lexbor import LexborHTMLParser, LexborNode

# WHATWG MIME sniffing's mark of binary content, as parser.py checks it.
_SNIFF_CHARS = 1024

# Every element the worker reads besides the job's fields. Each query walks
# the whole tree (~0.2 ms on a 60 KiB page, a third of the parse), and one
# union costs what one selector does: so one walk, sorted by tag after.
_READ = "a[href], area[href], base[href], meta[name], link[rel]"


class _Elements:
    """The attributes of the elements in _READ, by kind, in document order."""

    __slots__ = ("anchors", "base", "links", "metas")

    def __init__(self, tree: LexborHTMLParser) -> None:
        self.anchors: list[dict[str, str | None]] = []  # <a>, <area>
        self.base: str | None = None  # the first <base href>'s
        self.metas: list[tuple[str, str]] = []  # (name, content)
        self.links: list[tuple[str, str]] = []  # (rel, href)
        # `attributes` (a dict made in C) is faster to read than `attrs`
        # (a lazy view). .get throughout: Lexbor's [href] also matches a
        # namespaced xlink:href, which is no href.
        for node in tree.css(_READ):
            tag, attrs = node.tag, node.attributes
            if tag in ("a", "area"):
                self.anchors.append(attrs)
            elif tag == "meta":
                self.metas.append((attrs.get("name") or "", attrs.get("content") or ""))
            elif tag == "link":
                self.links.append((attrs.get("rel") or "", attrs.get("href") or ""))
            elif tag == "base" and self.base is None and "href" in attrs:
                self.base = attrs.get("href") or ""


class LexborPage:
    """One page's Lexbor tree and the questions the worker asks of it."""

    __slots__ = ("_elements", "_tree")

    def __init__(self, tree: LexborHTMLParser) -> None:
        self._tree = tree
        self._elements: _Elements | None = None

    def _read(self) -> _Elements:
        if self._elements is None:
            self._elements = _Elements(self._tree)
        return self._elements

    def hrefs(self, respect_nofollow: bool) -> list[str]:
        """The href values of the page's <a>/<area> elements in document
        order (without the rel=nofollow ones when they are not followed)."""
        hrefs = []
        for attrs in self._read().anchors:
            rel = attrs.get("rel") if respect_nofollow else None
            if rel is not None and "nofollow" in rel.lower().split():
                continue
            hrefs.append(attrs.get("href") or "")
        return hrefs

    def base_href(self) -> str | None:
        """The href of the page's first <base href>, if it has one."""
        return self._read().base

    def metas(self) -> Iterator[tuple[str, str]]:
        """(name, content) of each <meta name=...>, in document order."""
        return iter(self._read().metas)

    def link_rels(self) -> Iterator[tuple[str, str]]:
        """(rel, href) of each <link rel=...>, in document order."""
        return iter(self._read().links)

    def css_values(self, expr: str, attr: str | None) -> Iterator[str]:
        """What a CSS field's selector gives: each match's attribute `attr`,
        or its text with whitespace collapsed (as lxml's text_content()).
        Lazily: a field takes the first match with a value, and Lexbor stops
        at the first match (a <title> in microseconds) where a query of all
        of them walks the whole tree (0.2-0.6 ms a page)."""
        first = self._tree.css_first(expr)
        if first is None:
            return
        yield _value(first, attr)
        for node in self._tree.css(expr)[1:]:
            yield _value(node, attr)


def _value(node: LexborNode, attr: str | None) -> str:
    if attr is not None:
        return (node.attributes.get(attr) or "").strip()
    return " ".join((node.text(deep=True) or "").split())


def parse_lexbor(text: str) -> LexborPage | None:
    """The page of a body decoded by `decode_html`; None when it is empty or
    binary (the same decision as parser.py's `parse_text`)."""
    if not text or text.isspace() or "\x00" in text[:_SNIFF_CHARS]:
        return None
    return LexborPage(LexborHTMLParser(text))
