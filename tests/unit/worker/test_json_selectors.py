"""JMESPath selectors over JSON bodies, JSON-LD and inline scripts; links and
next pages from JSON; and how a page processor tells a JSON response."""

from __future__ import annotations

from typing import Any

import lxml.html
import pytest
from support.hostile import Page
from support.hostile_helpers import fetch_config, fetcher, hostile_web, url

from nadird.common.errors import ErrorKind
from nadird.common.urls import fingerprint
from nadird.job.selectors import validate_fields
from nadird.job.spec import Job, LinkRules, Pagination, Selector
from nadird.job.validate import validate_job
from nadird.worker.follow.filter import DomainCounts, LinkPipeline
from nadird.worker.follow.find import resolve_hrefs
from nadird.worker.follow.jsonlinks import json_hrefs, next_page, page_number, with_param
from nadird.worker.pages import PageProcessor, PageTask
from nadird.worker.parse.fields import extract_fields
from nadird.worker.parse.jsonsources import (
    PageJson,
    has_type,
    is_json_type,
    jsonld_objects,
    load_json,
    looks_like_json,
    script_object,
)

BODY = {
    "items": [
        {"id": 1, "url": "/p/1", "price": 12.5, "stock": 0, "name": "  Kettle  "},
        {"id": 2, "url": "p/2", "price": 3, "stock": 4, "on_sale": False},
    ],
    "next": "/api?page=2",
    "meta": {"total": 2},
}


def on_body(body: Any, **fields: list[Selector]) -> dict[str, Any]:
    return extract_fields(None, "", fields, PageJson(None, body))


def page(head: str = "", body: str = "") -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(f"<html><head>{head}</head><body>{body}</body></html>")


def test_jmes_values_keep_their_json_type() -> None:
    found = on_body(
        BODY,
        price=[Selector(jmes="items[0].price")],
        stock=[Selector(jmes="items[0].stock")],  # 0 is a value, not "nothing"
        sale=[Selector(jmes="items[1].on_sale")],
        name=[Selector(jmes="items[0].name")],
        meta=[Selector(jmes="meta")],
        first=[Selector(jmes="items[].price")],
        every=[Selector(jmes="items[].price", multiple=True)],
        one=[Selector(jmes="next", multiple=True)],
    )
    assert found == {
        "price": 12.5,
        "stock": 0,
        "sale": False,
        "name": "Kettle",
        "meta": {"total": 2},
        "first": 12.5,
        "every": [12.5, 3],
        "one": ["/api?page=2"],
    }


def test_empty_json_results_fall_back_to_the_next_selector() -> None:
    fields = {
        "v": [
            Selector(jmes="missing"),
            Selector(jmes="items[?price > `100`].id", multiple=True),  # []
            Selector(jmes="abs(meta)"),  # a function given the wrong type: no match
            Selector(jmes="meta.total"),
        ]
    }
    assert on_body(BODY, **fields) == {"v": 2}
    assert on_body({"other": {}}, **fields) == {"v": None}
    # An HTML page has no body JSON; a regex on the raw text still works.
    assert extract_fields(None, '{"a": 1}', {"a": [Selector(jmes="a"), Selector(regex=r"(\d)")]})


LD = """
<script type="application/ld+json">{"@type": "BreadcrumbList", "name": "crumbs"}</script>
<script type="application/ld+json">not json at all</script>
<script type="APPLICATION/LD+JSON"><!--
{"@context": "https://schema.org", "@graph": [
  {"@type": "WebPage", "name": "page"},
  {"@type": ["Product", "Thing"], "name": "Kettle",
   "offers": {"@type": "Offer", "price": "1,299.00", "availability": "https://schema.org/InStock"}}
]}
--></script>
<script type="application/ld+json">
[{"@type": "https://schema.org/Product", "name": "Other"}]</script>
"""


def test_jsonld_objects_are_flattened_and_chosen_by_type() -> None:
    doc = page(LD)
    names = [obj.get("name") for obj in jsonld_objects(doc)]
    assert names == ["crumbs", "page", "Kettle", "Other"]  # the bad block is skipped
    found = extract_fields(
        doc,
        "",
        {
            "price": [Selector(jsonld="Product", jmes="offers.price")],
            "names": [Selector(jsonld="Product", jmes="name", multiple=True)],
            "any": [Selector(jsonld="*", jmes="name")],
            "offer": [Selector(jsonld="Offer", jmes="price"), Selector(css="h1")],
            "whole": [Selector(jsonld="BreadcrumbList")],
        },
    )
    assert found == {
        "price": "1,299.00",
        "names": ["Kettle", "Other"],
        "any": "crumbs",
        "offer": None,  # an Offer nested in a Product is not a JSON-LD object of its own
        "whole": {"@type": "BreadcrumbList", "name": "crumbs"},
    }


@pytest.mark.parametrize(
    ("declared", "wanted", "matches"),
    [
        ("Product", "Product", True),
        ("schema:Product", "Product", True),
        ("http://schema.org/Product", "Product", True),
        (["Thing", "Product"], "Product", True),
        ("ProductModel", "Product", False),
        (None, "Product", False),
        (None, "*", True),
    ],
)
def test_jsonld_type_names(declared: Any, wanted: str, matches: bool) -> None:
    assert has_type({"@type": declared}, wanted) is matches


STATE = """
<script src="/app.js">window.__INITIAL_STATE__ = {"wrong": true}</script>
<script>if (window.__INITIAL_STATE__ == null) {}</script>
<script>window.__INITIAL_STATE__ = {product: {stock: 7, price: 9.5, tags: ['a', 'b',],},};
render(window.__INITIAL_STATE__);</script>
<script>var cart = {"items": [1, 2]}; start(cart);</script>
<script id="__NEXT_DATA__" type="application/json"> {"props": {"price": 42}} </script>
<script>var broken = {never: closed</script>
"""


def test_inline_script_objects_json_or_javascript() -> None:
    doc = page(STATE)
    assert script_object(doc, "window.__INITIAL_STATE__") == {
        "product": {"stock": 7, "price": 9.5, "tags": ["a", "b"]}
    }
    # The last part of a dotted name matches too; a comparison is no assignment.
    assert script_object(doc, "__INITIAL_STATE__")["product"]["stock"] == 7
    assert script_object(doc, "cart") == {"items": [1, 2]}
    assert script_object(doc, "__NEXT_DATA__") == {"props": {"price": 42}}
    assert script_object(doc, "broken") is None
    assert script_object(doc, "nothing") is None
    found = extract_fields(
        doc,
        "",
        {
            "stock": [Selector(script="window.__INITIAL_STATE__", jmes="product.stock")],
            "tags": [Selector(script="__INITIAL_STATE__", jmes="product.tags", multiple=True)],
            "next": [Selector(script="__NEXT_DATA__", jmes="props.price")],
            "fallback": [Selector(script="broken", jmes="never"), Selector(jmes="x")],
        },
    )
    assert found == {"stock": 7, "tags": ["a", "b"], "next": 42, "fallback": None}


def test_load_json_refuses_what_is_not_json() -> None:
    assert load_json(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}  # a UTF-8 BOM is allowed
    for bad in (b"<html>", b'{"a": NaN}', b"[" * 100_000, b'{"a": 1', b"", b"[1e400]"):
        with pytest.raises(ValueError):
            load_json(bad)
    # What a results message cannot carry as a number keeps its digits.
    huge = "123456789012345678901234567890"
    assert load_json(f"[{huge}, {2**64 - 1}, {-(2**63)}]") == [huge, 2**64 - 1, -(2**63)]
    # chompjs reads JavaScript literals through the same rules.
    doc = page(body=f"<script>var s = {{id: {huge}}}; var t = {{n: 1e400}};</script>")
    assert script_object(doc, "s") == {"id": huge} and script_object(doc, "t") is None


def test_what_looks_like_json() -> None:
    assert looks_like_json(b'  \n{"a": 1}') and looks_like_json(b"\xef\xbb\xbf[1]")
    assert not looks_like_json(b"<!doctype html>") and not looks_like_json(b'"a string"')
    for kind in ("application/json", "text/json", "application/ld+json", "application/vnd.x+json"):
        assert is_json_type(kind)
    assert not is_json_type("text/html") and not is_json_type(None)


@pytest.mark.parametrize(
    ("selector", "says"),
    [
        (Selector(jmes="items[."), r"fields\.f\[0\]: invalid jmes 'items\[\.': .* at column 6"),
        (Selector(jmes="offers.["), r"invalid jmes 'offers\.\[': incomplete expression$"),
        (Selector(jmes="nosuch(@)"), r"invalid jmes 'nosuch\(@\)': unknown function nosuch\(\)"),
        (Selector(jmes="a || length(@, @)"), r"length\(\) takes 1 arguments, got 2"),
        (Selector(jsonld="Product", jmes="not_null()"), r"not_null\(\) takes 1\+ arguments"),
        (Selector(jmes=" "), r"fields\.f\[0\]: empty jmes"),
        (Selector(script=""), r"fields\.f\[0\]: empty script"),
        (Selector(jmes="a", attr="href"), r"attr applies to xpath and css, not to JSON"),
    ],
)
def test_json_selectors_that_cannot_run_are_refused(selector: Selector, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        validate_fields({"f": [selector]})


def test_selector_shapes() -> None:
    validate_fields({"f": [Selector(jmes="not_null(a, b, c)"), Selector(jsonld="Product")]})
    for bad in (
        {"xpath": "//p", "jmes": "a"},
        {"css": "p", "script": "s"},
        {"jsonld": "Product", "script": "s"},
        {},
    ):
        with pytest.raises(ValueError):
            Selector(**bad)
    with pytest.raises(ValueError, match=r"links\.jmes\[1\]: invalid jmes"):
        validate_job(Job(links=LinkRules(jmes=["items[].url", "items[?"])))


def test_json_links_are_resolved_against_the_page() -> None:
    hrefs = json_hrefs(BODY, ["items[].url", "next", "meta", "items[].id"])
    assert hrefs == ["/p/1", "p/2", "/api?page=2"]  # numbers and objects are no URLs
    page_url = "http://a.test/api/list?page=1"
    found = resolve_hrefs([*hrefs, "javascript:x()", "/p/1", "?page=1", " "], page_url)
    assert found == ["http://a.test/p/1", "http://a.test/api/p/2", "http://a.test/api?page=2"]


@pytest.mark.parametrize(
    ("rule", "data", "page_url", "expected"),
    [
        (Pagination(next="n"), {"n": "/api?page=2"}, "http://a.test/api", "/api?page=2"),
        (Pagination(next="n"), {"n": None}, "http://a.test/api", None),
        (Pagination(next="n"), {"n": ["", "p3"]}, "http://a.test/api", "p3"),
        (
            Pagination(next="n", param="cursor"),
            {"n": "Zx9"},
            "http://a.test/api?cursor=Aa1&q=k",
            "http://a.test/api?q=k&cursor=Zx9",
        ),
        (Pagination(next="n", param="p"), {"n": 3.0}, "http://a.test/a", "http://a.test/a?p=3"),
        (
            Pagination(next="n", until_empty="items"),
            {"n": "/next", "items": []},
            "http://a.test/a",
            None,
        ),
        (
            Pagination(param="page", until_empty="items"),
            {"items": [0]},
            "http://a.test/api?q=x",
            "http://a.test/api?q=x&page=2",
        ),
        (
            Pagination(param="page", until_empty="items"),
            {"items": [0]},
            "http://a.test/api?page=7",
            "http://a.test/api?page=8",
        ),
        (
            Pagination(param="offset", until_empty="items", start=0, step=20),
            {"items": [{"id": 1}]},
            "http://a.test/api?offset=40",
            "http://a.test/api?offset=60",
        ),
        (
            Pagination(param="page", until_empty="items"),
            {"items": []},
            "http://a.test/api?page=7",
            None,
        ),
        (
            Pagination(param="page", until_empty="items"),
            {"items": [0]},
            "http://a.test/api?page=last",
            None,
        ),
    ],
)
def test_next_page(
    rule: Pagination, data: dict[str, Any], page_url: str, expected: str | None
) -> None:
    assert next_page(rule, data, page_url) == expected


def test_pagination_rules_are_checked() -> None:
    assert page_number("http://a.test/?page=&x=1", "page", 1) is None
    assert with_param("http://a.test/p?page=1&page=2", "page", "3") == "http://a.test/p?page=3"
    for bad, says in (
        ({}, "expected next"),
        ({"param": "page"}, "until_empty"),
        ({"param": " ", "next": "n"}, "query parameter name"),
        ({"param": "page", "until_empty": "i", "step": 0}, "step"),
    ):
        with pytest.raises(ValueError, match=says):
            Pagination(**bad)
    with pytest.raises(ValueError, match=r"paginate\.until_empty: 'items' is not a field"):
        Job(fields={"n": [Selector(jmes="n")]}, paginate=Pagination(next="n", until_empty="items"))


def test_a_json_job_travels_in_bags_unchanged() -> None:
    job = Job(
        name="api",
        fields={"p": [Selector(jsonld="Product", jmes="offers.price"), Selector(script="s")]},
        links=LinkRules(jmes=["items[].url"]),
        paginate=Pagination(param="page", until_empty="p", step=2),
    )
    assert Job.from_wire(job.to_wire()) == job
    assert job.reads_json() and Job(links=LinkRules(jmes=["a"])).reads_json()
    assert not Job(fields={"p": [Selector(jsonld="Product")]}).reads_json()


PAGES = {
    "/claimed": Page(b"<html>oops</html>", "application/json"),
    "/nan": Page(b'{"price": NaN}', "application/json; charset=utf-8"),
    "/plain": Page(b'{"price": "7"}', "text/plain"),
    "/html-typed": Page(b' {"price": 8}', "text/html"),
    "/looks": Page(b"{price: 9} is what it costs", "text/plain"),
    "/ld": Page(b'{"price": 10}', "application/ld+json"),
    "/noindex": Page(b'{"price": 11}', "application/json", headers={"X-Robots-Tag": "noindex"}),
}


async def processed(job: Job) -> dict[str, Any]:
    host = "j.test"
    with hostile_web() as (web, hostile):
        for path, content in PAGES.items():
            hostile.add_page(host, path, content)
        cfg = fetch_config()
        async with fetcher() as client:
            processor = PageProcessor(client, job, cfg, LinkPipeline(job, cfg, DomainCounts()))
            results = {}
            for path in PAGES:
                target = url(web, host, path)
                done = await processor.process(PageTask(target, fingerprint(target), 0))
                results[path] = done.result
    return results


async def test_a_page_processor_reads_json_responses_and_refuses_false_ones() -> None:
    job = Job(fields={"price": [Selector(jmes="price")]})
    results = await processed(job)
    failed = results["/claimed"]
    assert failed.error_kind is ErrorKind.PARSE and failed.status == 200
    assert failed.error.startswith("parse: body is not JSON: Expecting value")
    assert results["/nan"].error_kind is ErrorKind.PARSE and "NaN" in results["/nan"].error
    assert results["/plain"].data == {"price": "7"} and results["/plain"].error is None
    assert results["/html-typed"].data == {"price": 8}
    # It only looked like JSON, and says it is text: no fields, and no error.
    assert results["/looks"].data == {} and results["/looks"].error is None
    assert results["/ld"].data == {"price": 10}
    assert results["/noindex"].data == {} and results["/noindex"].body is None
    # A job that reads no JSON leaves JSON responses alone, as before.
    plain = await processed(Job(fields={"t": [Selector(css="title")]}))
    assert all(r.error is None and r.data in ({}, {"t": None}) for r in plain.values())
