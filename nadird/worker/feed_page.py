"""A fetched feed or sitemap as a page of a `feeds:` job (see job/feeds.py).

Its entries become the page's links (through the job's link rules, like any
link) and its item: `_feed` says what it was and what was left out,
`entries` lists what each entry stated (url, title, published, updated), so
the master can time how long after publication each article was fetched.
A URL shaped like a feed that answers with anything else (an HTML error
page, a truncated or hostile document) is a parse error, counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nadird.common.errors import ErrorKind, FetchError
from nadird.job.feeds import FeedsSpec, is_feed_url
from nadird.worker.fetch.decoding import gunzip_limited
from nadird.worker.follow.filter import LinkPipeline
from nadird.worker.follow.find import href_resolver
from nadird.worker.parse.feeds import FeedRead, NotAFeed, read_document, sniff
from nadird.worker.parse.signature import fields_signature

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(slots=True)
class FeedPage:
    data: dict[str, object] = field(default_factory=dict)
    links: list[str] = field(default_factory=list)
    error: FetchError | None = None
    signature: str | None = None


def is_feed(url: str, body: bytes) -> bool:
    """Whether the document is read as a feed: its URL or its first bytes say so."""
    return is_feed_url(url) or body.startswith(_GZIP_MAGIC) or sniff(body) is not None


def read_feed_page(
    url: str, body: bytes, spec: FeedsSpec, links: LinkPipeline, max_bytes: int
) -> FeedPage:
    try:
        if body.startswith(_GZIP_MAGIC):
            body = gunzip_limited(body, max_bytes)
        read = read_document(body, spec.max_entries)
    except NotAFeed as exc:
        return FeedPage(error=FetchError(ErrorKind.PARSE, f"not a feed: {exc}"))
    except FetchError as exc:  # a gzip past the size bound
        return FeedPage(error=FetchError(ErrorKind.PARSE, f"not a feed: {exc.message}"))
    entries = _canonical_entries(read, url)
    kept = set(links.follow(list(entries), url))
    data: dict[str, object] = {
        "_feed": read.summary(),
        "entries": [entry for link, entry in entries.items() if link in kept],
    }
    # Sorted: a feed that reorders the same entries has not changed.
    signature = fields_signature({"links": sorted(kept)})
    return FeedPage(data, [link for link in entries if link in kept], None, signature)


def _canonical_entries(read: FeedRead, base: str) -> dict[str, dict[str, str]]:
    """Entry data by canonical URL (relative ones resolved against the
    document's URL), first mention kept (a feed may repeat one)."""
    found: dict[str, dict[str, str]] = {}
    resolve = href_resolver(base)  # urljoin, when needed only (it cost a fifth of a read)
    for entry in read.entries:
        link = resolve(entry.url)
        if link is None:
            read.no_url += 1
            continue
        if link not in found:
            found[link] = {**entry.to_data(), "url": link}
    return found
