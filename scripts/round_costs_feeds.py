"""Feeds for scripts/bench_round_costs.py: documents of a realistic size in
the four forms a `feeds:` job reads, and a doc tree served with them.

The entries are real pages of a Debian doc tree (URL and <title>), so a
crawl that reads the feeds finds nothing it would not find by the tree's
own links: the same pages are fetched with `feeds:` on and off, and what
differs is the reading of the feeds. The site is a directory of symbolic
links to the tree's entries, its `index.html` a copy of the tree's with the
feeds announced (`<link rel="alternate">`) and linked (`<a href>`, which
a job without `feeds:` follows too), and a `feeds/` directory.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from urllib.parse import unquote
from xml.sax.saxutils import escape

from real_site_walk import walk

FORMATS = ("rss", "atom", "json", "news-sitemap")
FILE_NAMES = {"rss": "rss-{n}.xml", "atom": "atom-{n}.xml", "json": "feed-{n}.json",
              "news-sitemap": "news-sitemap-{n}.xml"}  # fmt: skip
ANNOUNCED = {"rss": "application/rss+xml", "atom": "application/atom+xml",
             "json": "application/feed+json"}  # fmt: skip
_TITLE = re.compile(rb"<title>(.*?)</title>", re.S | re.I)
_START = datetime(2026, 11, 1, 6, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Entry:
    url: str
    title: str
    published: datetime
    summary: str


@functools.cache
def linked_pages(root: Path) -> list[Path]:
    """The tree's HTML pages its index leads to by links (not its orphans:
    a feed listing one would have the crawl fetch more with feeds on)."""
    found = walk(root, "tree:80", "/index.html")
    paths = [unquote(k.split("/", 1)[1]) for k, status in found.status.items() if status == 200]
    return sorted(root / p for p in paths if p.endswith(".html"))


def entries_of(root: Path, base: str, count: int, seed: int) -> list[Entry]:
    """`count` pages of the tree under `root` (chosen at random, newest first),
    as entries: their URL under `base`, their title, a date and a summary."""
    pages = linked_pages(root)
    picked = random.Random(seed).sample(pages, min(count, len(pages)))
    found = []
    for i, path in enumerate(picked):
        html = path.read_bytes()
        title = _TITLE.search(html)
        text = (title.group(1) if title else b"").decode("utf-8", "replace").strip()
        summary = f"{text}: {len(html)} bytes of documentation, part {i} of the series."
        when = _START - timedelta(minutes=37 * i)
        found.append(Entry(f"{base}/{path.relative_to(root)}", text, when, summary))
    return found


def rss(entries: list[Entry], base: str) -> str:
    items = "".join(
        f"<item><title>{escape(e.title)}</title><link>{escape(e.url)}</link>"
        f"<guid isPermaLink='true'>{escape(e.url)}</guid>"
        f"<pubDate>{format_datetime(e.published)}</pubDate>"
        f"<description>{escape(e.summary)}</description></item>\n"
        for e in entries
    )
    return (
        "<?xml version='1.0' encoding='utf-8'?>\n<rss version='2.0'><channel>"
        f"<title>Docs</title><link>{base}/</link><description>New pages</description>"
        f"<lastBuildDate>{format_datetime(_START)}</lastBuildDate>\n{items}</channel></rss>\n"
    )


def atom(entries: list[Entry], base: str) -> str:
    items = "".join(
        f"<entry><title>{escape(e.title)}</title><link rel='alternate' href='{escape(e.url)}'/>"
        f"<id>{escape(e.url)}</id><published>{e.published.isoformat()}</published>"
        f"<updated>{e.published.isoformat()}</updated><author><name>Docs</name></author>"
        f"<summary>{escape(e.summary)}</summary></entry>\n"
        for e in entries
    )
    return (
        "<?xml version='1.0' encoding='utf-8'?>\n<feed xmlns='http://www.w3.org/2005/Atom'>"
        f"<title>Docs</title><id>{base}/</id><updated>{_START.isoformat()}</updated>"
        f"<link rel='self' href='{base}/feeds/atom.xml'/>\n{items}</feed>\n"
    )


def json_feed(entries: list[Entry], base: str) -> str:
    return json.dumps(
        {
            "version": "https://jsonfeed.org/version/1.1",
            "title": "Docs",
            "home_page_url": f"{base}/",
            "items": [
                {
                    "id": e.url,
                    "url": e.url,
                    "title": e.title,
                    "summary": e.summary,
                    "date_published": e.published.isoformat(),
                }
                for e in entries
            ],
        },
        indent=1,
    )


def news_sitemap(entries: list[Entry], base: str) -> str:
    urls = "".join(
        f"<url><loc>{escape(e.url)}</loc><news:news><news:publication>"
        "<news:name>Docs</news:name><news:language>en</news:language></news:publication>"
        f"<news:publication_date>{e.published.isoformat()}</news:publication_date>"
        f"<news:title>{escape(e.title)}</news:title></news:news></url>\n"
        for e in entries
    )
    return (
        "<?xml version='1.0' encoding='utf-8'?>\n"
        "<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9' "
        f"xmlns:news='http://www.google.com/schemas/sitemap-news/0.9'>\n{urls}</urlset>\n"
    )


WRITERS: dict[str, Callable[[list[Entry], str], str]] = {
    "rss": rss, "atom": atom, "json": json_feed, "news-sitemap": news_sitemap,
}  # fmt: skip


@dataclass(frozen=True)
class Document:
    path: str  # under the site, "feeds/rss-0.xml"
    form: str  # one of FORMATS
    entries: int
    body: bytes


def documents(root: Path, base: str, sizes: list[int]) -> list[Document]:
    """Each format at each size (entries)."""
    found = []
    for n, size in enumerate(sizes):
        entries = entries_of(root, base, size, seed=n)
        for form in FORMATS:
            body = WRITERS[form](entries, base).encode()
            path = "feeds/" + FILE_NAMES[form].format(n=n)
            found.append(Document(path, form, len(entries), body))  # the tree may have fewer
    return found


def build_site(tree: Path, site: Path, base: str, sizes: list[int]) -> list[str]:
    """The feed site under `site` (see the module doc); the feeds' paths."""
    site.mkdir(parents=True, exist_ok=True)
    for entry in tree.iterdir():
        if entry.name != "index.html":
            (site / entry.name).symlink_to(entry)
    feeds = documents(tree, base, sizes)
    (site / "feeds").mkdir()
    for doc in feeds:
        (site / doc.path).write_bytes(doc.body)
    announced = "".join(
        f'<link rel="alternate" type="{ANNOUNCED[d.form]}" href="{d.path}">'
        for d in feeds
        if d.form in ANNOUNCED
    )
    linked = "".join(f'<li><a href="{d.path}">{d.path}</a></li>' for d in feeds)
    index = (tree / "index.html").read_text(encoding="utf-8")
    index = index.replace("</head>", f"{announced}</head>", 1)
    index = index.replace("</body>", f"<ul>{linked}</ul></body>", 1)
    (site / "index.html").write_text(index, encoding="utf-8")
    return [d.path for d in feeds]
