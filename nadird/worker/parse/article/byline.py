"""Whether a page shows the date of its text beside its headline.

A news item or a blog post shows when it was written next to its headline
("24. März 2004, 19:49 | author", "14.06.2019 (ch)", "Thursday, July 28,
2011"), often with nothing in its metadata to say so. A shop's product, a
firm's service page or a club's "about us" page has no such line. kind.py
counts a page with this line as a dated one.

The headline is the longest heading (h1 to h3) whose text is part of the
page's title, as a headline is of "Headline - Site"; the date is looked for
in the visible text just before and just after it, where bylines, date
lines and breadcrumbs sit. Dates are numeric (14.06.2019, 2019-06-14,
6/14/2019), worded in any language written in words ("24. März 2004",
"4 March 2026", "July 28, 2011"), or Chinese and Japanese (2011年7月28日).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice

import lxml.html
from lxml import etree

# Visible text this close to the headline, on either side, is its byline.
NEAR_CHARS = 150
# A heading shorter than this ("News", "Blog") names a section, not a text.
HEADLINE_MIN_CHARS = 8
# Bounds on what is looked at, whatever a hostile page holds: a title is a
# line, and the headline is among the page's first headings.
TITLE_MAX_CHARS = 1000
HEADINGS_LOOKED_AT = 200

_YEAR = r"(?:19|20)\d\d"
_DATES = tuple(
    re.compile(pattern)
    for pattern in (
        rf"\b(?P<d>\d{{1,2}})[./-](?P<m>\d{{1,2}})[./-]{_YEAR}\b",  # 14.06.2019, 6/14/2019
        rf"\b{_YEAR}[./-](?P<m>\d{{1,2}})[./-](?P<d>\d{{1,2}})\b",  # 2019-06-14
        rf"\b(?P<d>\d{{1,2}})\.?\s+[^\W\d_]{{3,}}\.?,?\s+{_YEAR}\b",  # 24. März 2004
        rf"\b[^\W\d_]{{3,}}\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b",  # July 28, 2011
        rf"{_YEAR}\s*年\s*(?P<m>\d{{1,2}})\s*月\s*(?P<d>\d{{1,2}})\s*日",  # 2011年7月28日
    )
)
_UNSHOWN = frozenset({"head", "script", "style", "noscript", "template"})


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def _title(doc: lxml.html.HtmlElement) -> str:
    """The page's title and its Open Graph title, as one text to look headlines up in."""
    titles = [doc.findtext(".//title") or ""]
    titles += [
        meta.get("content") or ""
        for meta in doc.iter("meta")
        if (meta.get("property") or meta.get("name") or "").strip().lower() == "og:title"
    ]
    return _flat(" | ".join(titles))[:TITLE_MAX_CHARS]


def _headline(doc: lxml.html.HtmlElement) -> etree._Element | None:
    """The longest heading that is part of the title (a blog's name in its h1
    is part of every post's title too, and shorter than the post's headline)."""
    title = _title(doc)
    best, best_length = None, HEADLINE_MIN_CHARS - 1
    for heading in islice(doc.iter("h1", "h2", "h3"), HEADINGS_LOOKED_AT):
        text = _flat(heading.text_content())
        if len(text) > best_length and text in title:
            best, best_length = heading, len(text)
    return best


def _is_date(match: re.Match[str]) -> bool:
    groups = match.groupdict()
    day_ok = 1 <= int(groups["d"]) <= 31
    return day_ok and ("m" not in groups or 1 <= int(groups["m"]) <= 12)


def has_date(text: str) -> bool:
    """Whether the text holds a whole date (day, month and year)."""
    return any(_is_date(m) for pattern in _DATES for m in pattern.finditer(text))


def _near(texts: Iterator[str]) -> list[str]:
    """The text runs given, nearest first, until NEAR_CHARS characters."""
    found: list[str] = []
    length = 0
    for text in texts:
        found.append(text)
        length += len(text.strip())
        if length >= NEAR_CHARS:
            break
    return found


def _shown_runs(doc: lxml.html.HtmlElement, headline: etree._Element) -> Iterator[tuple[str, bool]]:
    """The page's shown text runs in reading order, each with whether it is
    the headline's. Walked without recursion: some pages nest deep."""
    hidden = 0  # inside how many script, style... elements
    inside = False
    for event, node in etree.iterwalk(doc, events=("start", "end")):
        tag = node.tag if isinstance(node.tag, str) else ""
        if event == "start":
            hidden += tag in _UNSHOWN
            inside = inside or node is headline
            if tag and not hidden and node.text:
                yield node.text, inside
            continue
        hidden -= tag in _UNSHOWN
        inside = inside and node is not headline
        if not hidden and node.tail:
            yield node.tail, inside


def shows_date(doc: lxml.html.HtmlElement) -> bool:
    """Whether a date is shown just before or after the page's headline."""
    headline = _headline(doc)
    if headline is None:
        return False
    runs = list(_shown_runs(doc, headline))
    positions = [i for i, (_, inside) in enumerate(runs) if inside]
    if not positions:
        return False
    before = (text for text, _ in reversed(runs[: positions[0]]))
    after = (text for text, _ in runs[positions[-1] + 1 :])
    # One run may be long: only the text by the headline counts (twice
    # NEAR_CHARS, as _near counted the runs' spaces too).
    shown_before = " ".join(" ".join(reversed(_near(before))).split())[-2 * NEAR_CHARS :]
    shown_after = " ".join(" ".join(_near(after)).split())[: 2 * NEAR_CHARS]
    return has_date(shown_before) or has_date(shown_after)
