"""The fetcher sends a request's method, headers, cookies and body, and
redirects treat them as browsers do; the synthetic web's log shows each hop."""

from __future__ import annotations

import pytest
from aiohttp import web as aioweb
from support.hostile_helpers import fetcher
from support.search import SearchForm

from nadird.job.request import parse
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread


async def redirect(request: aioweb.Request, host: str) -> aioweb.StreamResponse:
    """/go/STATUS/HOST: a redirect of that status to HOST's /search."""
    _, _, status, target = request.path.split("/")
    port = request.url.port
    return aioweb.Response(
        status=int(status), headers={"Location": f"http://{target}:{port}/search"}
    )


@pytest.mark.parametrize(
    ("status", "method", "body"),
    [(303, "GET", ""), (302, "GET", ""), (307, "POST", "q=kettle"), (308, "POST", "q=kettle")],
)
async def test_redirects_keep_or_drop_the_method_and_body(
    status: int, method: str, body: str
) -> None:
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        SearchForm().install(web)
        web.add_route("/go/", redirect, methods=frozenset({"POST"}))
        start = f"http://a.test:{web.port}/go/{status}/a.test"
        spec = parse(
            {"url": start, "method": "POST", "form": {"q": "kettle"}, "cookies": {"c": "1"}}
        )
        async with fetcher() as client:
            outcome = await client.fetch(start, request=spec)
        first, second = web.entries()
    assert (first.method, first.body, first.headers["cookie"]) == ("POST", "q=kettle", "c=1")
    assert (second.path, second.method, second.body) == ("/search", method, body)
    assert second.headers["cookie"] == "c=1"  # the same host
    assert outcome.status == 200 and outcome.redirects == [start]
    # The form page for a GET, the results for the POST.
    assert (b"class=query" in outcome.body) == (method == "POST")


async def test_cookies_and_authorization_stay_with_their_host() -> None:
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        SearchForm().install(web)
        web.add_route("/go/", redirect, methods=frozenset({"POST"}))
        start = f"http://a.test:{web.port}/go/307/b.test"
        headers = {"Authorization": "Bearer t", "X-Other": "kept"}
        spec = parse(
            {
                "url": start,
                "method": "POST",
                "json": {"q": "kettle"},
                "headers": headers,
                "cookies": {"c": "1"},
            }
        )
        async with fetcher() as client:
            await client.fetch(start, request=spec)
        first, second = web.entries()
    assert first.headers == {"cookie": "c=1", "x-other": "kept"}
    assert (second.host, second.method, second.body) == ("b.test", "POST", '{"q":"kettle"}')
    assert second.headers == {"x-other": "kept"}


async def test_a_head_request_reads_no_body() -> None:
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        page = web.graph.seeds()[0]
        async with fetcher(max_body_bytes=1, max_decoded_bytes=1) as client:
            outcome = await client.fetch(page, request=parse({"url": page, "method": "HEAD"}))
        (entry,) = web.entries()
    assert (entry.method, outcome.status, outcome.body) == ("HEAD", 200, b"")
