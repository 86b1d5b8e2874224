"""A page's body sent once when its exchanges carry it already.

With an archive (Bag.archive), a page's result carries the body for the
store (decoded, maybe cut at fetch.store_body_bytes) and each exchange's
body as received, for the WARC records. For a page sent uncompressed and
not cut, which is most, the two are the same bytes: the worker leaves the
first out (PageResult.body_in_exchange) and the master puts it back on
receipt, before anything reads the page. A compressed page (gzip, br), a
cut body or a rendered DOM differs, and is sent as before.

An older master refuses the field, as any field it does not know: upgrade
the master first (docs/operations/archives.md).
"""

from __future__ import annotations

from nadird.protocol.exchange import Exchange
from nadird.protocol.messages import Results


def body_to_send(body: bytes | None, exchanges: list[Exchange]) -> tuple[bytes | None, bool]:
    """The body a result carries, and whether it is left out as the same
    bytes as the last exchange's body."""
    if body and exchanges and exchanges[-1].body == body:
        return None, True
    return body, False


def put_bodies_back(msg: Results) -> None:
    """On receipt: each page's body that was left out, from its last exchange
    (the same bytes object, no copy)."""
    for page in msg.pages:
        if page.body_in_exchange:
            # Frozen for everyone else; this is the decode's last step.
            object.__setattr__(page, "body", page.exchanges[-1].body)
