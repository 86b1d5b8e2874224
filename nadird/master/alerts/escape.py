"""Values that came from a page or a peer (a field's value, a URL, a domain,
a worker's name), made harmless in the text of an alert.

Such a value is written by whoever wrote the page or runs the worker, and an
alert reaches people through chat and mail that read markup and mentions.
`safe` cuts the value to MAX_CHARS, shows Unicode bidi controls and other
control characters as visible escapes (`\\u202e`) instead of letting them
reorder the line, turns mentions into text (`@all`, `@here`, `@channel`,
`@someone` get a fullwidth `＠`; Slack's `<!channel>`, `<@U1>`, `<#C1>` a
`‹`), then escapes what the channel's format reads as markup. The alert's
own words are not passed through it: they are nadird's.
"""

from __future__ import annotations

import html
import re
from typing import Literal

from nadird.common.visible import BIDI, as_escape

# text: plain (a webhook's `text`, DingTalk); html: mail's HTML part, Telegram;
# markdown: chat apps that render markdown (Mattermost, Discord...).
Format = Literal["text", "html", "markdown"]
FORMATS: tuple[Format, ...] = ("text", "html", "markdown")

MAX_CHARS = 200  # of one value in an alert's text (a changed field shows 100)
CUT = "..."

# Bidi embeddings, overrides and isolates, the marks, and every C0/C1
# control (a newline would break the one-line text): shown, never obeyed.
_INVISIBLE = re.compile(f"[{BIDI}\u200e\u200f\u061c\x00-\x1f\x7f-\x9f]")
# A mention starts a word: `@all`, `@here`, `@someone` (not the @ of a@b.org).
_AT_MENTION = re.compile(r"(?<![\w.@])@(?=\w)")
# Slack's (and others') special mentions and channel links: <!here>, <@U1>, <#C1>.
_ANGLE_MENTION = re.compile(r"<(?=[!@#])")
# What CommonMark reads as markup inside a line (links, images, emphasis,
# code, raw HTML, entities); `#`, `-`, `+`, `.` matter only at a line's
# start, and a value never starts the alert's line.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>!|~&])")


def neutral(value: str) -> str:
    """The value cut, its controls visible and its mentions inert (no markup escaped)."""
    if len(value) > MAX_CHARS:
        value = value[: MAX_CHARS - len(CUT)] + CUT
    value = _INVISIBLE.sub(as_escape, value)
    value = _AT_MENTION.sub("\uff20", value)
    return _ANGLE_MENTION.sub("\u2039", value)


def safe(value: str, fmt: Format) -> str:
    """`value` as it may appear in an alert's text in `fmt`."""
    value = neutral(value)
    if fmt == "html":
        return html.escape(value, quote=True)
    if fmt == "markdown":
        return _MARKDOWN.sub(r"\\\1", value)
    return value
