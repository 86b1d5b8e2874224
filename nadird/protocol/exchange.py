"""One HTTP exchange as it happened, for the web archive (WARC).

A worker sends these beside a page's result only when the bag asks for them
(Bag.archive > 0): the request as sent and the response as received, the
body before any content decoding, so that the master can write `request` and
`response` records that replay what the server sent. A redirect chain is one
exchange per hop, the final answer last.
"""

from __future__ import annotations

from dataclasses import dataclass

# A head (request or status line and headers) longer than this is refused:
# aiohttp itself refuses response heads far shorter.
MAX_HEAD = 256 * 1024


@dataclass(frozen=True, slots=True)
class Exchange:
    url: str  # the target URI of this hop (its length: PageResult checks it)
    started: float  # epoch seconds when the request left (the WARC-Date)
    # The request line and headers as sent, CRLF-separated, ending in an empty line.
    request_head: bytes
    # The status line and headers as received, same form. A Transfer-Encoding
    # header is renamed X-Nadird-Transfer-Encoding: `body` is de-chunked.
    response_head: bytes
    body: bytes  # as received (still gzip or br when the server encoded it)
    request_body: bytes = b""
    ip: str = ""  # the server's address (empty through a proxy)
    truncated: bool = False  # `body` was cut at Bag.archive bytes

    def __post_init__(self) -> None:
        if max(len(self.request_head), len(self.response_head)) > MAX_HEAD:
            raise ValueError(f"request_head, response_head: at most {MAX_HEAD} bytes")
        if len(self.ip) > 64:
            raise ValueError("ip: at most 64 characters")
