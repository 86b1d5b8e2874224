"""A fetched HTML body parsed by the parser its job reads pages with.

The choice is the job's, made once from its rules (job/parser_choice.py):
lxml for what needs libxml2's tree, Lexbor (lexbor.py) for the rest. Both
read the same text, decoded once by browser rules (parser.py).
"""

from __future__ import annotations

from lxml.html import HtmlElement

from nadird.job.parser_choice import PageParser
from nadird.worker.parse.base import Tree
from nadird.worker.parse.lexbor import parse_lexbor
from nadird.worker.parse.parser import parse_text


def parse_page(text: str, url: str, parser: PageParser) -> Tree | None:
    """The page's tree; None when it is empty, binary or unparsable."""
    if parser == "lexbor":
        return parse_lexbor(text)
    return parse_text(text, url)


def lxml_tree(tree: Tree) -> HtmlElement | None:
    """lxml's tree of the page, for what only reads that one (feeds, the text
    signature): a job needing them always has it (job/parser_choice.py)."""
    return tree if isinstance(tree, HtmlElement) else None
