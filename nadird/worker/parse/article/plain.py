"""The plain text of an extracted article: one paragraph per block, separated
by a blank line, with no markup (the markdown field keeps that).

The engine's own text output keeps markdown for links, images and lists, so
the text is rebuilt from its content tree, whose blocks are `head`, `p`,
`list` (of `item`), `quote`, `code` and `table` (of `row` of `cell`);
images (`graphic`) are no text.
"""

from __future__ import annotations

import unicodedata

from lxml import etree

_BLOCKS = frozenset({"head", "p", "quote", "code"})
# Elements whose text is not run into their neighbours' (a list item's
# heading and its paragraph are two phrases, not one word at the seam).
_SEPARATE = frozenset({*_BLOCKS, "list", "item", "table", "row", "cell", "lb", "div", "graphic"})


def text_of(element: etree._Element) -> str:
    """All the text inside the element (not its tail), a space between blocks.

    Walked without recursion: the content tree of a deeply nested page is deep."""
    parts: list[str] = []
    for event, node in etree.iterwalk(element, events=("start", "end")):
        separate = node.tag in _SEPARATE
        if event == "start":
            parts.append(" " if separate else "")
            parts.append(node.text or "" if isinstance(node.tag, str) else "")
        else:
            parts.append(" " if separate else "")
            if node is not element:
                parts.append(node.tail or "")
    return "".join(parts)


# Soft hyphens mark where a word may be split at a line's end: invisible
# unless it is, and no part of the word (a search for it would miss it).
SOFT_HYPHEN = "\xad"


def clean(text: str) -> str:
    """Text in the composed Unicode form (NFC: "ü" one character, as most
    pages write it and a search for it types it), without soft hyphens."""
    return unicodedata.normalize("NFC", text.replace(SOFT_HYPHEN, ""))


def words(element: etree._Element) -> str:
    """The element's text, clean, with whitespace collapsed."""
    return " ".join(clean(text_of(element)).split())


def _rows(table: etree._Element) -> str:
    """One line per row, cells separated by a bar (a nested table is in its cell)."""
    rows = (
        " | ".join(words(c) for c in row.iterchildren("cell")) for row in table.iterchildren("row")
    )
    return "\n".join(row for row in rows if row.strip(" |"))


def _list(element: etree._Element) -> str:
    """One line per item (a nested list is in its item)."""
    items = (words(item) for item in element.iterchildren("item"))
    return "\n".join(item for item in items if item)


def _block_text(element: etree._Element) -> str:
    tag = element.tag
    if tag == "list":
        return _list(element)
    if tag == "table":
        return _rows(element)
    if tag in _BLOCKS or tag == "div":
        return words(element)
    return ""


def plain_text(body: etree._Element | None, title: str | None = None) -> str:
    """The text of the engine's content tree, blocks separated by a blank line;
    without its first heading when that is the `title` (a field of its own)."""
    blocks = _blocks(body)
    if blocks and title is not None and blocks[0] == " ".join(clean(title).split()):
        blocks = blocks[1:]
    return "\n\n".join(blocks)


def _blocks(body: etree._Element | None) -> list[str]:
    if body is None:
        return []
    blocks: list[str] = []
    for element in body:
        if not isinstance(element.tag, str):
            continue  # a comment or processing instruction
        if element.tag == "div" and len(element):
            blocks.extend(_blocks(element))  # a nested section: its own blocks
            continue
        text = _block_text(element)
        if text:
            blocks.append(text)
    return blocks
