"""The WARC records of one page: what each exchange becomes.

Per exchange (a redirect's hop, or the final answer): a `response` record with
the status line, the headers and the body as received, or a `revisit` record
when nothing new came back (a 304, or the same payload digest as the copy
already archived), and its `request` record. Per page: a `metadata` record
with what the crawler made of it and, for a page rendered in a browser, a
`conversion` record with the rendered DOM. warcio computes the block and
payload digests as it writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from typing import Any

from warcio.recordbuilder import RecordBuilder
from warcio.statusandheaders import StatusAndHeaders, StatusAndHeadersParser
from warcio.utils import Digester

from nadird.protocol.exchange import Exchange
from nadird.protocol.messages import PageResult

WARC_VERSION = "WARC/1.1"
PROFILE = "http://netpreserve.org/warc/1.1/revisit/"
NOT_MODIFIED = PROFILE + "server-not-modified"
IDENTICAL = PROFILE + "identical-payload-digest"
# The URI prefix of the records that are not the exchange (see _extra).
EXTRA_URI = "urn:nadird:"
_HTTP = StatusAndHeadersParser(["HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/2.0", "HTTP/0.9"])
_REQUEST = StatusAndHeadersParser([], verify=False)
Record = Any  # warcio's ArcWarcRecord (untyped)


@dataclass(frozen=True, slots=True)
class Stored:
    """The last full copy archived of a URI: what a revisit refers to."""

    digest: str
    date: str  # its WARC-Date


# The copy archived of a URI, or None; and the one to remember from now on.
Lookup = Callable[[str], Stored | None]


def warc_date(epoch: float) -> str:
    """WARC/1.1 dates carry microseconds: two fetches in one second differ."""
    moment = datetime.fromtimestamp(epoch, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def payload_digest(body: bytes) -> str:
    digester = Digester("sha1")
    digester.update(body)
    return str(digester)


class PageRecords:
    """Builds records (warcio's builder holds only the WARC version)."""

    def __init__(self) -> None:
        self._builder = RecordBuilder(warc_version=WARC_VERSION)

    def warcinfo(self, filename: str, info: dict[str, str]) -> Record:
        return self._builder.create_warcinfo_record(filename, info)

    def page(
        self, page: PageResult, job: str, node: str, lookup: Lookup, via: str | None = None
    ) -> tuple[list[Record], dict[str, Stored]]:
        """The page's records, and the URIs whose full copy they archived
        (`via`: the page whose link led to it, "seed", None if not known)."""
        records: list[Record] = []
        archived: dict[str, Stored] = {}
        # The page's own answer: the last exchange for its final URL (a
        # rendered page's sub-requests follow it).
        last, response_id = page.exchanges[-1] if page.exchanges else None, ""
        for exchange in page.exchanges:
            response, stored = self._response(exchange, lookup)
            record_id = response.rec_headers.get_header("WARC-Record-ID")
            records += [response, self._request(exchange, record_id)]
            if stored is not None:
                archived[exchange.url] = stored
            if exchange.url == page.final_url or not response_id:
                last, response_id = exchange, record_id
        if last is None:
            return [], {}
        records.append(self._metadata(page, (job, node, via), last, response_id))
        if page.rendered and page.body:
            records.append(self._rendered(page, last, response_id))
        return records, archived

    def _response(self, exchange: Exchange, lookup: Lookup) -> tuple[Record, Stored | None]:
        http = _HTTP.parse(BytesIO(exchange.response_head))
        digest = payload_digest(exchange.body)
        date = warc_date(exchange.started)
        headers = _warc_headers(exchange, date)
        headers["WARC-Payload-Digest"] = digest
        before = lookup(exchange.url)
        if http.get_statuscode() == "304":
            return self._revisit(exchange, http, headers, NOT_MODIFIED, before), None
        if before is not None and before.digest == digest and not exchange.truncated:
            return self._revisit(exchange, http, headers, IDENTICAL, before), None
        if exchange.truncated:
            headers["WARC-Truncated"] = "length"
        record = self._builder.create_warc_record(
            exchange.url,
            "response",
            payload=BytesIO(exchange.body),
            length=len(exchange.body),
            warc_headers_dict=headers,
            http_headers=http,
        )
        return record, Stored(digest, date)

    def _revisit(
        self,
        exchange: Exchange,
        http: StatusAndHeaders,
        headers: dict[str, str],
        profile: str,
        before: Stored | None,
    ) -> Record:
        headers["WARC-Profile"] = profile
        if before is not None:
            headers["WARC-Refers-To-Target-URI"] = exchange.url
            headers["WARC-Refers-To-Date"] = before.date
        return self._builder.create_warc_record(
            exchange.url, "revisit", warc_headers_dict=headers, http_headers=http
        )

    def _request(self, exchange: Exchange, response_id: str) -> Record:
        http = _REQUEST.parse(BytesIO(exchange.request_head))
        headers = _warc_headers(exchange, warc_date(exchange.started))
        headers["WARC-Concurrent-To"] = response_id
        return self._builder.create_warc_record(
            exchange.url,
            "request",
            payload=BytesIO(exchange.request_body),
            length=len(exchange.request_body),
            warc_headers_dict=headers,
            http_headers=http,
        )

    def _metadata(
        self, page: PageResult, by: tuple[str, str, str | None], last: Exchange, response_id: str
    ) -> Record:
        job, node, via = by
        decided = {
            "job": job,
            "node": node,
            "via": via,
            "url": page.url,
            "final_url": page.final_url,
            "status": page.status,
            "depth": page.depth,
            "redirects": page.redirects,
            "rendered": page.rendered,
            "fields": page.data,
            "item_key": page.item_key,
            "error": page.error,
            "links": len(page.links),
        }
        return self._extra(last, "metadata", "application/json", _json(decided), response_id)

    def _rendered(self, page: PageResult, last: Exchange, response_id: str) -> Record:
        body = page.body or b""
        return self._extra(last, "conversion", "text/html; charset=utf-8", body, response_id)

    def _extra(
        self, last: Exchange, kind: str, content_type: str, block: bytes, response_id: str
    ) -> Record:
        headers = {"WARC-Date": warc_date(last.started)}
        headers["WARC-Concurrent-To" if kind == "metadata" else "WARC-Refers-To"] = response_id
        return self._builder.create_warc_record(
            # Not the page's own URI: replay tools index every record by its
            # URI and would serve this one in place of the response.
            f"{EXTRA_URI}{kind}:{last.url}",
            kind,
            payload=BytesIO(block),
            length=len(block),
            warc_content_type=content_type,
            warc_headers_dict=headers,
        )


def own_record(records: list[Record]) -> tuple[int, bool] | None:
    """Of one page's records (PageRecords.page): the index of its own answer
    (the response or revisit its metadata record names), and whether a
    conversion record holds a rendered DOM; None for a page with no records."""
    ids = [r.rec_headers.get_header("WARC-Record-ID") for r in records]
    meta = next((r for r in records if r.rec_type == "metadata"), None)
    if meta is None:
        return None
    index = ids.index(meta.rec_headers.get_header("WARC-Concurrent-To"))
    return index, any(r.rec_type == "conversion" for r in records)


def _warc_headers(exchange: Exchange, date: str) -> dict[str, str]:
    headers = {"WARC-Date": date}
    if exchange.ip:
        headers["WARC-IP-Address"] = exchange.ip
    return headers


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True).encode()
