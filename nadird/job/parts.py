"""A job's parts: how a field is found (Selector) and what its value must
become (FieldSpec), which links are followed (LinkRules), how a page leads
to the next (Pagination), what says a site refused a proxy (ProxyBan).
Job (spec.py) is made of them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from nadird.items.schema import FIELD_TYPES

Scope = Literal["same-domain", "allowed-domains", "any"]


@dataclass(frozen=True)
class Selector:
    """One way to find a field: one of xpath, css or regex on the HTML, or JMESPath on JSON.

    xpath may select elements (their text is taken), attributes or strings;
    css selects elements, and `attr` takes an attribute instead of the text;
    regex runs on the raw text and takes group 1 if the pattern has groups.
    `jmes` is a JMESPath expression over JSON: the response's body when the
    response is JSON, or with `jsonld` (a schema.org @type, "*" for any) the
    page's JSON-LD objects, or with `script` (a variable such as
    window.__INITIAL_STATE__, or a script element's id) the object an inline
    script holds (worker/parse/jsonsources.py). JSON values keep their type.
    `multiple` returns every match as a list instead of the first one.
    `article` names a generic article field (job/article.py): a step of its
    own, last in a field's list, taken when every selector before found nothing.
    """

    xpath: str | None = None
    css: str | None = None
    regex: str | None = None
    jmes: str | None = None
    jsonld: str | None = None
    script: str | None = None
    attr: str | None = None
    multiple: bool = False
    # The generic step: an article field (title, text, published...), taken
    # when every selector before it found nothing; alone, and last.
    article: str | None = None

    def __post_init__(self) -> None:
        if self.article is not None:
            _check_generic_step(self)
            return
        html = [k for k in ("xpath", "css", "regex") if getattr(self, k) is not None]
        sources = [k for k in ("jsonld", "script") if getattr(self, k) is not None]
        if (html and (sources or self.jmes is not None)) or len(html) > 1:
            raise ValueError("exactly one of xpath, css, regex or jmes (with jsonld or script)")
        if len(sources) > 1:
            raise ValueError("jsonld and script exclude each other: one JSON source per selector")
        if not html and not sources and self.jmes is None:
            raise ValueError("one of xpath, css, regex, jmes, jsonld or script must be set")


def _check_generic_step(sel: Selector) -> None:
    others = [k for k, v in asdict(sel).items() if k != "article" and v not in (None, False)]
    if others:
        raise ValueError(f"article: a step of its own, got {others[0]} beside it")


@dataclass(frozen=True)
class FieldSpec:
    """What a field's value must become (see items/schema.py and docs/jobs/index.md).

    `process` lists processor steps, each a name or a one-key mapping
    {name: argument}, run in order after the selectors; `type` is checked on
    the result; `required` makes an empty value an invalid item.
    """

    type: str | None = None
    required: bool = False
    process: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.type is not None and self.type not in FIELD_TYPES:
            raise ValueError(f"type: expected one of {', '.join(FIELD_TYPES)}, got {self.type!r}")


@dataclass(frozen=True)
class LinkRules:
    """Which discovered links are followed."""

    scope: Scope = "same-domain"
    allowed_domains: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    follow: bool = True
    # JMESPath expressions over a JSON response whose values are URLs to follow.
    jmes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Pagination:
    """How a page leads to the next one (worker/follow/jsonlinks.py).

    `next` names a field whose value is the next page: a URL (relative ones
    resolve against the page), or with `param` a token put in that query
    parameter of the page's URL. Without `next`, `param` is a page number
    incremented by `step` (a URL without it is on page `start`) while the
    field `until_empty` has a value. With both, `next` is followed only while
    `until_empty` has a value.
    """

    next: str | None = None
    param: str | None = None
    until_empty: str | None = None
    start: int = 1
    step: int = 1

    def __post_init__(self) -> None:
        if self.next is None and self.param is None:
            raise ValueError("expected next (a field) or param (a query parameter)")
        if self.next is None and self.until_empty is None:
            raise ValueError("until_empty: expected the field whose emptiness ends the walk")
        if self.param is not None and not self.param.strip():
            raise ValueError("param: expected a query parameter name")
        if self.step == 0:
            raise ValueError("step: must not be 0")

    def field_names(self) -> dict[str, str]:
        """{key: field} of the keys that name a field of the job."""
        named = {"next": self.next, "until_empty": self.until_empty}
        return {key: name for key, name in named.items() if name is not None}


@dataclass(frozen=True)
class ProxyBan:
    """What says a site refused the proxy (not the page): these statuses, or
    a page matching this CSS selector (a captcha, a "access denied" box).
    Each lowers the proxy's score by fetch.proxies.score.ban."""

    statuses: list[int] = field(default_factory=list)
    selector: str | None = None

    def __post_init__(self) -> None:
        for i, status in enumerate(self.statuses):
            if not 100 <= status <= 599:
                raise ValueError(f"proxy_ban.statuses[{i}]: expected an HTTP status 100-599")
