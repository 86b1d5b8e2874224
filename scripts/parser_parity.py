"""Lexbor against lxml on every HTML file of the real-site trees.

For each page: the links (with and without rel=nofollow honoured), the
canonical link, the robots directives and a `css: title` field, through
both parsers; prints per tree the pages read and how many differ, with the
first differences. Needs the doc packages (scripts/bench-deps.sh).

    python scripts/parser_parity.py --trees doxygen,debian
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench_real_site import TREE_SETS, TREES

from nadird.job.spec import Selector
from nadird.worker.follow.find import extract_links
from nadird.worker.parse.directives import canonical_link, robots_directives
from nadird.worker.parse.fields import extract_fields
from nadird.worker.parse.page import parse_page
from nadird.worker.parse.parser import decode_html

FIELDS = {"title": [Selector(css="title")]}


def read(body: bytes, url: str, parser: Any) -> tuple[Any, ...] | None:
    text = decode_html(body)
    doc = parse_page(text, url, parser)
    if doc is None:
        return None
    links = (extract_links(doc, url, True), extract_links(doc, url, False))
    directives = robots_directives(doc, None, "nadird")
    return (*links, canonical_link(doc, url), directives, extract_fields(doc, text, FIELDS))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--trees", default="doxygen,debian")
    args = ap.parse_args()
    names = [n for part in args.trees.split(",") for n in TREE_SETS.get(part, part).split(",")]
    for name in names:
        root = Path(TREES[name][0])
        pages = differ = 0
        for path in sorted(root.rglob("*.html")):
            url = f"http://{name}.test/{path.relative_to(root)}"
            body = path.read_bytes()
            pages += 1
            if read(body, url, "lxml") != read(body, url, "lexbor"):
                differ += 1
                if differ <= 3:
                    print(json.dumps({"tree": name, "differs": str(path)}))
        print(json.dumps({"tree": name, "pages": pages, "differ": differ}))


if __name__ == "__main__":
    main()
