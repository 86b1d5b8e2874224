"""robots.txt files shared by the rule tests (test_robots.py) and the crawl
that must obey them (test_polite_crawl.py), with the verdict for each path."""

from __future__ import annotations

STAR = """\
User-agent: *
Disallow: /private/
Allow: /private/open/
Disallow: /*.pdf$
Disallow: /shop/*/cart
Disallow: /tie
Allow: /tie
Disallow: /end$
Disallow: /caf%C3%A9
"""
# Path -> allowed for the token 'nadird'.
STAR_VERDICTS = {
    "/": True,
    "/public": True,
    "/private/x": False,
    "/private/open/x": True,  # the longest match wins
    "/doc.pdf": False,  # '*' and '$'
    "/dir/doc.pdf": False,
    "/doc.pdf?x=1": True,  # '$' anchors the end, query included
    "/doc.pdfx": True,
    "/shop/a/b/cart": False,
    "/shop/cart": True,
    "/tie": True,  # equal allow and disallow: allow
    "/end": False,
    "/end/more": True,
    "/caf%C3%A9": False,  # percent-encoded paths
}

GROUPS = """\
User-agent: otherbot
Disallow: /

User-agent: NADIRD
Disallow: /mine/
Crawl-delay: 0.3

User-agent: *
Disallow: /everyone/
"""
GROUPS_VERDICTS = {
    "/mine/x": False,  # our group, matched case-insensitively
    "/everyone/x": True,  # '*' does not apply once a group names us
    "/x": True,
}
