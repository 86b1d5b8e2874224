"""One news story syndicated across a web: copies that are near-duplicates
and a different story, served under WIRE by `wire_route`.

`COPIES` maps a path to its page: the story as its site published it;
a copy that keeps the story and changes the site around it (another name,
other related links); one that adds a republication note to the text
itself; the same page under another URL. The blog post (OTHER) is a story
of its own.
"""

from __future__ import annotations

from aiohttp import web

from support.articles import html_of

WIRE = "/wire/"
# Without the original's canonical link, which would send every copy to it.
_NEWS = html_of("news_article.html").replace('<link rel="canonical"', '<link rel="alternate"')
_NOTE = (
    "<p>This story was first published by the Coastal Ledger and is republished"
    " here with permission.</p>"
)
_SHARE = '</div>\n  <div class="share">'

OTHER = f"{WIRE}blog/sourdough"
COPIES: dict[str, str] = {
    f"{WIRE}ledger/tunnel": _NEWS,
    f"{WIRE}daily/tunnel": _NEWS.replace("The Coastal Ledger", "Harbour Daily").replace(
        "Related stories", "More from Harbour Daily"
    ),
    f"{WIRE}gazette/tunnel": _NEWS.replace(_SHARE, _NOTE + _SHARE, 1),
    f"{WIRE}ledger/tunnel-print": _NEWS,
    OTHER: html_of("blog_post.html"),
}


async def wire_route(request: web.Request, host: str) -> web.StreamResponse:
    """SyntheticWeb route for WIRE: the home page links to every copy in order."""
    if request.path == WIRE:
        links = "".join(f'<li><a href="{path}">{path}</a></li>' for path in COPIES)
        home = f"<html><head><title>Wire</title></head><body><ul>{links}</ul></body></html>"
        return web.Response(text=home, content_type="text/html")
    if request.path in COPIES:
        return web.Response(text=COPIES[request.path], content_type="text/html")
    return web.Response(status=404, text="404: Not Found\n")
