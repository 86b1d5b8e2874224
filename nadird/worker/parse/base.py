"""The base URL of a parsed page, which its links and its meta refresh resolve against."""

from __future__ import annotations

from urllib.parse import urljoin

import lxml.html


def base_url(doc: lxml.html.HtmlElement, page_url: str) -> str:
    """The URL relative references of the page resolve against: the page URL,
    or the first <base href> resolved against it if that is http(s)."""
    base = doc.find(".//base[@href]")
    if base is None:
        return page_url
    href = (base.get("href") or "").strip()
    try:
        resolved = urljoin(page_url, href)
    except ValueError:
        return page_url
    return resolved if resolved.lower().startswith(("http://", "https://")) else page_url
