"""The real news pages of the article quality sets as a site for
scripts/bench_article_crawl.py (`--eval-pages`).

Every page of scripts/article_eval_data.py and scripts/article_eval_snippets.py
(as scripts/bench_article_quality.py loads them: the snippet set without the
pages the full-text set already has) is written unchanged, byte for byte, to
`pages/NNN-name.html` under a directory, and `index.html` links them all.
nginx serves that directory as one host; the crawl starts at the index with
max_depth 1, so it fetches the index and each page once and follows nothing
found on the pages (their own links are the saved sites' menus and articles:
on this host they would all be 404s, off it they are out of scope).
"""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

from article_eval_data import load_cases
from article_eval_snippets import load_snippet_cases
from bench_real_run import Site
from real_site_walk import key

DEFAULT_CACHE = Path.home() / ".cache/nadird-article-eval"
INDEX = "/index.html"
MAX_DEPTH = 1  # the index, then its links; nothing found on the pages
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def eval_pages(cache: Path) -> list[tuple[str, bytes]]:
    """(name, HTML) of every page of both quality sets, in the sets' order."""
    cases = load_cases(cache)
    known = {hashlib.sha256(case.html).digest() for case in cases}
    snippet_cases = load_snippet_cases(cache, known)
    return [(c.name, c.html) for c in cases] + [(c.name, c.html) for c in snippet_cases]


def write_site(pages: list[tuple[str, bytes]], root: Path) -> list[str]:
    """The pages and their index under `root`; the pages' paths from the root."""
    (root / "pages").mkdir(parents=True)
    paths = []
    for number, (name, body) in enumerate(pages, 1):
        path = f"/pages/{number:03d}-{_UNSAFE.sub('-', name).strip('-')[:60]}.html"
        (root / path.lstrip("/")).write_bytes(body)
        paths.append(path)
    items = "\n".join(
        f'<li><a href="{html.escape(path[1:])}">{html.escape(name)}</a></li>'
        for path, (name, _) in zip(paths, pages, strict=True)
    )
    index = (
        '<!doctype html>\n<html><head><meta charset="utf-8"><title>Evaluation pages</title>'
        f"</head>\n<body><h1>Evaluation pages</h1>\n<ul>\n{items}\n</ul></body></html>\n"
    )
    (root / INDEX.lstrip("/")).write_text(index, encoding="utf-8")
    return paths


def pages_site(
    cache: Path, root: Path, port: int
) -> tuple[Site, dict[str, int], dict[str, object]]:
    """The site nginx serves, the pages the crawl must store (key -> status),
    and what was written (for the header line)."""
    pages = eval_pages(cache)
    paths = write_site(pages, root)
    origin = f"127.0.0.2:{port}"
    site = Site(roots={origin: root}, seeds=[f"http://{origin}{INDEX}"])
    expected = {key(f"http://{origin}{path}"): 200 for path in [INDEX, *paths]}
    sizes = sorted(len(body) for _, body in pages)
    seen = {
        "root": str(root),
        "pages": len(pages),
        "html_kb_mean": round(sum(sizes) / len(sizes) / 1000, 1),
        "html_kb_max": round(sizes[-1] / 1000, 1),
    }
    return site, expected, seen
