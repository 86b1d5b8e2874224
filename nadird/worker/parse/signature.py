"""A page's signature: what a revisit compares to tell a change.

Taken from what the user cares about, never from the raw bytes: a job with
fields signs its extracted fields (a clock or an ad elsewhere on the page
changes nothing), any other job signs the page's main text (store/textfp.py:
scripts, styles and whitespace left out) after removing the elements its
`signature_ignore` selectors match. The two kinds are prefixed differently,
so a job that gains fields sees one change, not a false "unchanged".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from lxml.cssselect import CSSSelector
from lxml.html import HtmlElement

from nadird.common.textfp import text_of


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def fields_signature(data: Mapping[str, Any]) -> str:
    # sort_keys: the same fields in another order are the same page.
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return "f:" + _digest(text)


@lru_cache(maxsize=64)
def _selector(css: str) -> CSSSelector:
    return CSSSelector(css)


def text_signature(doc: HtmlElement, ignore: list[str]) -> str:
    """Signature of the main text; removes the ignored elements from `doc`,
    so it is called when nothing else reads the tree any more."""
    for css in ignore:
        found = _selector(css)(doc)
        # Listed first: dropping nodes while iterating would skip their siblings.
        for node in list(found) if isinstance(found, list) else []:
            if isinstance(node, HtmlElement) and node.getparent() is not None:
                node.drop_tree()
    return "t:" + _digest(text_of(doc))


def signature(
    has_fields: bool, data: Mapping[str, Any], doc: HtmlElement | None, ignore: list[str]
) -> str | None:
    """The page's signature; None when there is nothing to sign (not HTML)."""
    if has_fields:
        return fields_signature(data)
    if doc is None:
        return None
    return text_signature(doc, ignore)
