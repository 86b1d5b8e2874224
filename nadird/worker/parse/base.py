"""The base URL of a parsed page, which its links and its meta refresh resolve against."""

from __future__ import annotations

from typing import TypeAlias
from urllib.parse import urljoin

import lxml.html

from nadird.worker.parse.lexbor import LexborPage

# A parsed HTML page: lxml's tree, or Lexbor's for the jobs that take it
# (job/parser_choice.py).
Tree: TypeAlias = lxml.html.HtmlElement | LexborPage


def base_url(doc: Tree, page_url: str) -> str:
    """The URL relative references of the page resolve against: the page URL,
    or the first <base href> resolved against it if that is http(s)."""
    if isinstance(doc, LexborPage):
        href = doc.base_href()
    else:
        base = doc.find(".//base[@href]")
        href = None if base is None else base.get("href") or ""
    if href is None:
        return page_url
    try:
        resolved = urljoin(page_url, href.strip())
    except ValueError:
        return page_url
    return resolved if resolved.lower().startswith(("http://", "https://")) else page_url
