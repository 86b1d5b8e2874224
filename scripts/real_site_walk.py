"""The pages a same-host crawler must fetch from a doc tree served by nginx.

Walks a directory's HTML files offline, as a crawler confined to one host
would walk them over HTTP: from the seed, every <a href> (and <area href>:
nadird and Scrapy follow both; the walk counts how many there are) that
resolves to the same scheme, host and port, fragment dropped, becomes a URL.
A URL whose file exists is a 200 page (parsed for links if nginx serves it
as HTML); a directory URL with a trailing slash is its index.html; anything
else is a 404 page, fetched once and not parsed. Directory links without the
trailing slash (a 301 from nginx) are counted apart: the benchmark refuses a
tree that has them, as a redirect is not one fetch per URL on every side.

`key()` is the identity URLs are compared by (the crawlers' records, the
nginx access log, this walk): host:port, percent-decoded path, query.

    python scripts/real_site_walk.py /usr/share/doc/python3.11/html /index.html
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

import lxml.html

HTML_SUFFIXES = (".html", ".htm")  # what nginx's mime.types serves as text/html


def key(url: str) -> str:
    """host:port + decoded path (+ '?query'): one identity for every side."""
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.hostname}:{parts.port}{unquote(parts.path) or '/'}{query}"


def key_of_request(origin: str, request_uri: str) -> str:
    """key() of an nginx log line's `$server_addr:$server_port` and `$request_uri`."""
    return key(f"http://{origin}{request_uri}")


@dataclass
class Walk:
    """What a same-host crawl of one tree must fetch, by key."""

    status: dict[str, int] = field(default_factory=dict)  # key -> 200 / 404
    redirects: set[str] = field(default_factory=set)  # directory links without '/'
    area_links: int = 0  # <area href> seen (nadird and Scrapy follow them)
    links_seen: int = 0  # same-host <a>/<area> hrefs on parsed pages, repeats included

    def count(self, code: int) -> int:
        return sum(1 for s in self.status.values() if s == code)


def _file_of(root: Path, path: str) -> Path:
    relative = unquote(path).lstrip("/")
    target = root / relative
    return target / "index.html" if path.endswith("/") else target


def _hrefs(page: Path, url: str) -> tuple[list[str], int]:
    """Absolute, fragment-free URLs of the page's links; how many were <area>."""
    try:
        doc = lxml.html.fromstring(page.read_bytes())
    except (ValueError, lxml.etree.ParserError):
        return [], 0
    base = url
    for element in doc.iter("base"):
        href = element.get("href")
        if href:
            base = urljoin(url, href.strip())
            break
    out: list[str] = []
    areas = 0
    for element in doc.iter("a", "area"):
        href = element.get("href")
        if href is None:
            continue
        href = href.strip().replace("\t", "").replace("\n", "").replace("\r", "")
        if not href or href.startswith("#"):
            continue
        absolute = urldefrag(urljoin(base, href))[0]
        out.append(absolute)
        areas += element.tag == "area"
    return out, areas


def walk(root: Path, origin: str, seed_path: str) -> Walk:
    """Breadth-first over the tree, as http://{origin} serving `root`."""
    result = Walk()
    start = f"http://{origin}{seed_path}"
    queue: deque[str] = deque([start])
    result.status[key(start)] = 0
    while queue:
        url = queue.popleft()
        path = urlsplit(url).path or "/"
        target = _file_of(root, path)
        if target.is_file():
            result.status[key(url)] = 200
        else:
            result.status[key(url)] = 404
            if target.is_dir():
                result.redirects.add(key(url))
            continue
        if not target.name.lower().endswith(HTML_SUFFIXES):
            continue
        links, areas = _hrefs(target, url)
        result.area_links += areas
        for link in links:
            parts = urlsplit(link)
            if parts.scheme != "http" or parts.netloc != origin:
                continue
            result.links_seen += 1
            link_key = key(link)
            if link_key not in result.status:
                result.status[link_key] = 0
                queue.append(link)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("seed_path", help="path of the seed page, e.g. /index.html")
    parser.add_argument("--origin", default="127.0.0.2:8080")
    args = parser.parse_args()
    if not os.path.isdir(args.root):
        parser.error(f"{args.root} is not a directory")
    result = walk(args.root, args.origin, args.seed_path)
    summary = {
        "pages": len(result.status),
        "ok": result.count(200),
        "not_found": result.count(404),
        "redirects": len(result.redirects),
        "area_links": result.area_links,
        "links_seen": result.links_seen,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
