"""Which HTML parser reads a job's pages: lxml (libxml2) or Lexbor (selectolax).

Lexbor parses a page and walks its links in a third to a half of lxml's
time (see docs/BENCHMARKS.md), but only part of what a job may ask of a page can be
answered from its tree: links, `<base href>`, `<link rel=canonical>`,
`<meta name=robots>`, CSS and regex fields. Everything else reads the lxml
tree: XPath, JSON-LD and inline-script selectors, articles and the generic
step, feeds, and the text signature of a revisited job without fields.

So the choice is made once per job, from its rules, never per page: `parser:
auto` (the default) takes Lexbor when nothing in the job needs lxml, `lxml`
forces lxml, and `lexbor` forces Lexbor and is refused when the job needs
lxml (the reasons are named). `nadird parse` prints the choice and why.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Literal, Protocol

from selectolax.lexbor import LexborHTMLParser, SelectolaxError

ParserOption = Literal["auto", "lxml", "lexbor"]
PageParser = Literal["lxml", "lexbor"]
PARSER_OPTIONS: tuple[ParserOption, ...] = ("auto", "lxml", "lexbor")


class _Selector(Protocol):
    @property
    def xpath(self) -> str | None: ...
    @property
    def css(self) -> str | None: ...
    @property
    def jsonld(self) -> str | None: ...
    @property
    def script(self) -> str | None: ...
    @property
    def article(self) -> str | None: ...


class _JobRules(Protocol):
    """What of a job (job/spec.py's Job) the choice reads."""

    @property
    def parser(self) -> ParserOption: ...
    @property
    def fields(self) -> Mapping[str, Iterable[_Selector]]: ...
    @property
    def article(self) -> object: ...
    @property
    def feeds(self) -> object: ...
    @property
    def revisit(self) -> object: ...
    @property
    def expire(self) -> object: ...


@functools.cache
def _probe() -> LexborHTMLParser:
    return LexborHTMLParser("<html><body><p>probe</p></body></html>")


@functools.lru_cache(maxsize=1024)
def lexbor_reads_css(expr: str) -> bool:
    """Whether Lexbor understands the CSS selector. cssselect's extensions
    (`:contains()`, `[a!=b]`...) are not CSS, and Lexbor refuses them: such
    a field keeps the job on lxml, where it has always worked."""
    try:
        _probe().css(expr)
    except (SelectolaxError, ValueError):
        return False
    return True


def _selector_needs(where: str, sel: _Selector) -> str | None:
    if sel.xpath is not None:
        return f"{where} is XPath"
    if sel.css is not None and not lexbor_reads_css(sel.css):
        return f"{where}: Lexbor cannot read the CSS selector {sel.css!r}"
    if sel.jsonld is not None or sel.script is not None:
        return f"{where} reads JSON-LD or an inline script"
    if sel.article is not None:
        return f"{where} is the generic article step"
    return None


def lxml_needs(job: _JobRules) -> list[str]:
    """Why the job's pages need the lxml tree (empty: Lexbor can answer all)."""
    needs = []
    for name, selectors in job.fields.items():
        for i, sel in enumerate(selectors):
            need = _selector_needs(f"fields.{name}[{i}]", sel)
            if need is not None:
                needs.append(need)
    if job.article:
        needs.append("article: extracts articles")
    if job.feeds:
        needs.append("feeds: finds feed links")
    # Read from the keys, not the parsed policy: a bad policy is the config
    # loader's to report, under its own key.
    revisits = job.revisit is not None or job.expire is not None
    if revisits and not job.fields:
        needs.append("revisit without fields: signs the page's text")
    return needs


def page_parser(job: _JobRules) -> PageParser:
    """The parser the job's HTML pages go through (see the module's doc)."""
    if job.parser == "lxml":
        return "lxml"
    if job.parser == "lexbor":
        return "lexbor"
    return "lxml" if lxml_needs(job) else "lexbor"


def check_parser(job: _JobRules) -> None:
    """ValueError when `parser: lexbor` is asked of a job that needs lxml."""
    if job.parser not in PARSER_OPTIONS:
        raise ValueError(f"parser: expected one of {', '.join(PARSER_OPTIONS)}, got {job.parser!r}")
    needs = lxml_needs(job) if job.parser == "lexbor" else []
    if needs:
        raise ValueError(f"parser: lexbor cannot serve this job ({'; '.join(needs)}): use auto")


def parser_description(job: _JobRules) -> str:
    """One line saying which parser reads the job's pages, and why."""
    chosen = page_parser(job)
    if job.parser != "auto":
        return f"{chosen} (parser: {job.parser})"
    needs = lxml_needs(job)
    return f"lxml (auto: {needs[0]})" if needs else "lexbor (auto: no rule of the job needs lxml)"
