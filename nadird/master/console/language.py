"""Which language a console page is in, and its strings in that language.

In order: a `?lang=` query (the language switch link; the page then sets
LANG_COOKIE so that the choice stays), the cookie, `console.language` unless
it is `auto`, and the browser's Accept-Language (highest q first; zh, zh-CN
and zh-Hans are Simplified Chinese, anything else English).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from markupsafe import Markup, escape

from nadird.master.console.catalog import CATALOGS

LANG_COOKIE = "nadird_lang"
DEFAULT = "en"
MAX_RANGES = 32  # of an Accept-Language header: the rest is ignored
# Tags (lower case) of Simplified Chinese; zh-TW, zh-HK and zh-Hant are not.
CHINESE = frozenset({"zh", "zh-cn", "zh-hans", "zh-hans-cn", "zh-sg", "zh-hans-sg"})


def language_of_tag(tag: str) -> str | None:
    """The catalog of one language tag (any case); None for one we lack."""
    tag = tag.strip().lower()
    if tag in CHINESE:
        return "zh-CN"
    if tag == "en" or tag.startswith("en-"):
        return "en"
    return None


def _quality(params: list[str]) -> float:
    """The q of a language range's parameters; an unreadable one is 0 (refused)."""
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                q = float(value)
            except ValueError:
                return 0.0
            return q if 0.0 <= q <= 1.0 else 0.0
    return 1.0


def from_accept_language(header: str | None) -> str | None:
    """The catalog the browser prefers most among those we have (ties: the
    first named); None when it names none of them."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for index, item in enumerate(header.split(",")[:MAX_RANGES]):
        tag, *params = item.split(";")
        language = language_of_tag(tag)
        q = _quality(params)
        if language is not None and q > 0:
            ranked.append((-q, index, language))
    return min(ranked)[2] if ranked else None


def choose(
    query: str | None, cookie: str | None, accept_language: str | None, configured: str
) -> str:
    """The page's language (see the module's docstring)."""
    for asked in (query, cookie):
        language = language_of_tag(asked) if asked else None
        if language is not None:
            return language
    if configured != "auto":
        return configured
    return from_accept_language(accept_language) or DEFAULT


@dataclass(frozen=True)
class Strings:
    """The catalog of one language, for templates (`t`, `label`) and handlers (`text`)."""

    language: str

    @property
    def catalog(self) -> Mapping[str, str]:
        return CATALOGS[self.language]

    def text(self, key: str, /, **params: object) -> str:
        """Plain text (a notice, a log-free message): placeholders filled as they are."""
        return self.catalog[key].format(**params)

    def t(self, key: str, /, **params: object) -> Markup:
        """For a template: the string escaped, each parameter escaped unless it
        is already Markup (a `<code>` made by the template)."""
        return Markup(escape(self.catalog[key])).format(**params)

    def label(self, prefix: str, value: object) -> str:
        """A value shown in a table (a state, a status): its label, or the value
        itself when the catalog has none (a kind this version does not know)."""
        return self.catalog.get(f"{prefix}.{value}", str(value))


def code(text: str) -> Markup:
    """`<code>text</code>`, for a placeholder of `Strings.t`."""
    return Markup("<code>{}</code>").format(text)


def stat(name: str, text: str) -> Markup:
    """A number console.js refreshes: `<span data-stat="name">text</span>`."""
    return Markup('<span data-stat="{}">{}</span>').format(name, text)
