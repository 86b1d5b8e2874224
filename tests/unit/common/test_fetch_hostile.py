"""The fetcher against hostile servers, in process: every failure is a
FetchError of a known kind, within the configured limits and timeouts."""

from __future__ import annotations

import time
import tracemalloc

import pytest
from support.hostile import Page
from support.hostile_helpers import MIB, fetcher, hostile_web, url

from nadird.common.errors import FetchError
from nadird.testing.web import run_in_thread


async def failure(client: object, target: str) -> FetchError:
    with pytest.raises(FetchError) as caught:
        await client.fetch(target)  # type: ignore[attr-defined]
    return caught.value


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/huge", "too_large"),
        ("/huge-declared", "too_large"),
        ("/bomb/gzip", "too_large"),
        ("/bomb/deflate", "too_large"),
        ("/bomb/gzip-finite", "too_large"),
        ("/stall", "timeout"),
        ("/hang", "timeout"),
        ("/trickle", "timeout"),
        ("/loop/a", "redirect_loop"),
        ("/redirect/12", "too_many_redirects"),
    ],
)
async def test_hostile_responses_end_as_errors_within_limits(path: str, kind: str) -> None:
    with hostile_web() as (web, hostile):
        hostile.add_host("h.test")
        async with fetcher(max_redirects=10) as client:
            started = time.monotonic()
            error = await failure(client, url(web, "h.test", path))
            took = time.monotonic() - started
    assert error.kind == kind, error
    assert took < 2.0 + 0.5  # total_timeout bounds even a trickle


async def test_brotli_bomb_is_bounded() -> None:
    pytest.importorskip("brotli")
    with hostile_web() as (web, hostile):  # the bomb is built before it serves
        hostile.add_host("h.test")
        async with fetcher(read_timeout=5.0, total_timeout=10.0) as client:
            error = await failure(client, url(web, "h.test", "/bomb/br"))
    assert error.kind == "too_large"


@pytest.mark.parametrize("path", ["/bomb/gzip", "/bomb/deflate", "/bomb/gzip-finite", "/bomb/br"])
async def test_a_bomb_is_never_held_beyond_the_limit(path: str) -> None:
    if path == "/bomb/br":
        pytest.importorskip("brotli")
    # What the fetch allocates at its peak, as Python's allocator counts it
    # (the decoders' output included), not the process's RSS, which other
    # threads, allocator arenas and the GC move. The body is held up to the
    # limit plus one piece in decoding (decoding.py), with the read buffers:
    # 1.1-1.6 MiB for a 1 MiB limit. A bomb decoded whole is 64 MiB or more.
    with hostile_web() as (web, hostile):
        hostile.add_host("h.test")
        async with fetcher(read_timeout=5.0, total_timeout=10.0) as client:
            tracemalloc.start()
            try:
                error = await failure(client, url(web, "h.test", path))
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    assert error.kind == "too_large"
    assert peak < 2 * MIB, peak / MIB


async def test_redirect_chain_within_the_limit_is_followed_and_recorded() -> None:
    with hostile_web() as (web, hostile):
        hostile.add_host("h.test")
        async with fetcher(max_redirects=5) as client:
            outcome = await client.fetch(url(web, "h.test", "/redirect/3"))
    assert outcome.status == 200
    assert outcome.final_url == url(web, "h.test", "/redirect/0")
    assert outcome.redirects == [url(web, "h.test", f"/redirect/{n}") for n in (3, 2, 1)]


async def test_gzip_pages_are_decoded_and_slow_ones_are_fine_within_timeouts() -> None:
    import gzip

    with hostile_web() as (web, hostile):
        body = b"<html><title>zipped</title></html>"
        page = Page(gzip.compress(body), headers={"Content-Encoding": "gzip"})
        hostile.add_page("h.test", "/zipped", page)
        async with fetcher() as client:
            zipped = await client.fetch(url(web, "h.test", "/zipped"))
            slow = await client.fetch(url(web, "h.test", "/slow/0.3"))
    assert zipped.body == body
    assert slow.status == 200 and slow.elapsed >= 0.3


async def test_redirect_to_a_refused_address_never_reaches_it() -> None:
    """127.0.0.1 allowed by the allow-list; a name pinned to 127.0.0.2 is not."""
    with hostile_web() as (web, hostile), run_in_thread(host="127.0.0.2") as inside:
        hostile.add_host("outside.test")
        target = f"/to/inside.test/{inside.port}/secret"
        resolve = {"outside.test": "127.0.0.1", "inside.test": "127.0.0.2"}
        async with fetcher(
            allow_private=False, allow_networks=["127.0.0.1/32"], resolve=resolve
        ) as client:
            error = await failure(client, url(web, "outside.test", target))
            literal = await failure(client, f"http://127.0.0.2:{inside.port}/")
            ok = await client.fetch(url(web, "outside.test", "/redirect/0"))
        assert inside.entries() == []  # nothing ever arrived on 127.0.0.2
        assert [e.path for e in web.entries()] == [target, "/redirect/0"]
    assert error.kind == "blocked_address"
    assert literal.kind == "blocked_address"  # IP literals skip the resolver: checked too
    assert ok.status == 200


async def test_user_agents_rotate() -> None:
    with hostile_web() as (web, hostile):
        hostile.add_html("h.test", "/")
        async with fetcher(user_agents=["bot-a/1 (+https://a.example)", "bot-b/1"]) as client:
            for _ in range(4):
                await client.fetch(url(web, "h.test", "/"))
        assert [e.ua for e in web.entries()] == ["bot-a/1 (+https://a.example)", "bot-b/1"] * 2


async def test_non_html_and_odd_pages_come_back_as_they_are() -> None:
    with hostile_web() as (web, hostile):
        hostile.add_host("h.test")
        async with fetcher() as client:
            binary = await client.fetch(url(web, "h.test", "/binary"))
            wrong = await client.fetch(url(web, "h.test", "/wrong-charset"))
    assert binary.content_type == "application/octet-stream" and len(binary.body) == 4096
    assert wrong.charset == "utf-8" and "Café".encode("cp1252") in wrong.body


def test_limits_are_what_the_tests_assume() -> None:
    from support.hostile_helpers import fetch_config

    cfg = fetch_config()
    assert cfg.max_decoded_bytes == cfg.max_body_bytes == MIB
