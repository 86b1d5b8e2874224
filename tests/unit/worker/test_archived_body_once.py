"""With an archive, a page served uncompressed travels once in its result
(in its exchange), not twice; the master puts it back as the body the store
keeps. A compressed page still carries both: the body decoded for the store,
the exchange as the server sent it. Real fetches of a loopback server."""

from __future__ import annotations

import gzip

from support.hostile import Page, html_page
from support.hostile_helpers import fetch_config, fetcher, hostile_web, url

from nadird.common.typecheck import build
from nadird.common.urls import fingerprint
from nadird.job.spec import Job
from nadird.protocol.bodies import put_bodies_back
from nadird.protocol.codec import decode, encode
from nadird.protocol.messages import PageResult, Results
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.pages import PageProcessor, PageTask

CAPTURE = 1024 * 1024  # Bag.archive: the exchanges' bodies kept whole
PADDING = "<p>" + "words of a page " * 4000 + "</p>"  # ~64 KB: the frame is mostly body


async def fetched(paths: list[str]) -> tuple[list[PageResult], dict[str, bytes]]:
    """Each path's result as the worker sends it, and the bodies as served."""
    job = build(Job, {})
    config = fetch_config()
    plain = html_page("plain", body=PADDING)
    served = {"/plain": plain, "/gzip": plain}
    with hostile_web() as (web, hostile):
        hostile.add_host("a.test")
        hostile.add_page("a.test", "/plain", Page(plain))
        hostile.add_page(
            "a.test", "/gzip", Page(gzip.compress(plain), headers={"Content-Encoding": "gzip"})
        )
        async with fetcher() as client:
            links = LinkPipeline(job, config, DomainCounts())
            processor = PageProcessor(client, job, config, links, capture=CAPTURE)
            results = []
            for path in paths:
                target = url(web, "a.test", path)
                outcome = await processor.process(PageTask(target, fingerprint(target), 0))
                assert outcome.result is not None
                results.append(outcome.result)
    return results, {path: served[path] for path in paths}


def received(page: PageResult) -> tuple[int, PageResult]:
    """The frame's size, and the page as the master reads it."""
    frame = encode(Results(node="w1", lease="l", epoch=1, job="default", pages=[page]))
    msg = decode(frame)
    assert isinstance(msg, Results)
    put_bodies_back(msg)
    return len(frame), msg.pages[0]


async def test_an_uncompressed_page_travels_once_and_the_master_has_its_body() -> None:
    (page,), served = await fetched(["/plain"])
    body = served["/plain"]
    assert page.body_in_exchange and page.body is None
    size, master_page = received(page)
    assert len(body) < size < 1.2 * len(body)  # once, not twice
    assert master_page.body == body  # what the store keeps
    assert master_page.exchanges[-1].body == body  # what the archive keeps


async def test_a_compressed_page_carries_its_decoded_body_and_the_bytes_as_sent() -> None:
    (page,), served = await fetched(["/gzip"])
    assert not page.body_in_exchange
    _, master_page = received(page)
    assert master_page.body == served["/gzip"]
    assert gzip.decompress(master_page.exchanges[-1].body) == served["/gzip"]
