"""Request specs (nadird/job/request.py): the user shape, the fingerprint rules,
the wire and frontier forms, and what a plain GET costs (nothing)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import msgpack
import pytest

from nadird.common.errors import ConfigError
from nadird.common.urls import fingerprint
from nadird.config import config_from_dict
from nadird.job.request import RequestError, RequestSpec, link_fields, parse
from nadird.master.row import Row
from nadird.master.state.frontier_db import FrontierDB
from nadird.master.view.api_body import BadBody, parse_seeds
from nadird.protocol.codec import decode, encode
from nadird.protocol.messages import Bag, PageResult, Results
from nadird.testing import forkserver

URL = "http://shop.test/search"


def spec(**given: Any) -> RequestSpec:
    return parse({"url": URL, **given})


# ------------------------------------------------------------ fingerprints
def test_a_get_without_a_body_keeps_the_fingerprint_of_its_url() -> None:
    assert spec().fingerprint() == fingerprint(URL)
    # Headers, cookies and meta say how to ask and what to remember, not what is asked.
    dressed = spec(headers={"X-Token": "a"}, cookies={"sid": "1"}, meta={"q": 1})
    assert dressed.fingerprint() == fingerprint(URL)
    assert spec(method="get").fingerprint() == fingerprint(URL)


def test_form_fields_in_another_order_are_one_request() -> None:
    first = spec(method="POST", form={"q": "kettle", "page": 1})
    again = spec(method="POST", form={"page": "1", "q": "kettle"}, headers={"X-A": "b"})
    assert first.fingerprint() == again.fingerprint()
    assert first.body == again.body == b"page=1&q=kettle"
    raw = spec(
        method="POST", body="q=kettle&page=1", content_type="application/x-www-form-urlencoded"
    )
    assert raw.fingerprint() == first.fingerprint()


def test_what_is_asked_for_makes_requests_different() -> None:
    post = spec(method="POST", form={"q": "kettle", "page": 1})
    different = [
        spec(),
        spec(method="HEAD"),
        spec(method="POST"),
        spec(method="PUT", form={"q": "kettle", "page": 1}),
        spec(method="POST", form={"q": "kettle", "page": 2}),
        spec(method="POST", json={"q": "kettle", "page": 1}),
        parse({"url": URL + "?x=1", "method": "POST", "form": {"q": "kettle", "page": 1}}),
    ]
    prints = {s.fingerprint() for s in different}
    assert len(prints) == len(different) and post.fingerprint() not in prints
    # Values of one name keep their order: a[]=1&a[]=2 is not a[]=2&a[]=1.
    assert (
        spec(method="POST", form={"a": ["1", "2"]}).fingerprint()
        != spec(method="POST", form={"a": ["2", "1"]}).fingerprint()
    )


def test_json_bodies_are_canonical_with_sorted_keys() -> None:
    given = spec(method="POST", json={"b": [1, {"d": 2, "c": 3}], "a": "é"})
    assert given.body == '{"a":"é","b":[1,{"c":3,"d":2}]}'.encode()
    assert given.content_type == "application/json"
    raw = spec(
        method="POST",
        body='{ "a": "é", "b": [1, {"c": 3, "d": 2}] }',
        content_type="application/json",
    )
    assert raw.fingerprint() == given.fingerprint()
    vendor = spec(method="POST", json={"a": 1}, content_type="application/vnd.api+json")
    assert vendor.content_type == "application/vnd.api+json"


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("given", "key", "reason"),
    [
        ({"method": "DELETE"}, "method", "expected one of GET, POST, PUT, HEAD"),
        ({"method": 1}, "method", "expected a string"),
        ({"headers": {"X-A": "a\r\nX-B: b"}}, "headers.X-A", "control character"),
        ({"headers": {"X-A": "a\x00"}}, "headers.X-A", "control character"),
        ({"headers": {"X-A": 5}}, "headers.X-A", "expected a string, got int"),
        ({"headers": {"Bad Name": "x"}}, "headers.Bad Name", "token"),
        ({"headers": {"content-length": "3"}}, "headers.content-length", "not allowed"),
        ({"headers": ["X-A"]}, "headers", "expected a mapping"),
        ({"cookies": {"sid": "a;b"}}, "cookies.sid", "';'"),
        ({"cookies": {"sid": "a\nb"}}, "cookies.sid", "control character"),
        (
            {"method": "POST", "body": "{nope", "content_type": "application/json"},
            "body",
            "not valid JSON",
        ),
        ({"method": "POST", "body": "[NaN]", "content_type": "application/json"}, "body", "NaN"),
        ({"method": "POST", "body": "x"}, "content_type", "required with body"),
        ({"content_type": "text/plain"}, "content_type", "only with body"),
        ({"method": "POST", "json": {}, "form": {}}, "form", "give one of json, form or body"),
        ({"method": "POST", "json": {"x": float("nan")}}, "json", "not JSON"),
        ({"method": "POST", "form": {"a": {"b": 1}}}, "form.a", "a string, a number"),
        ({"method": "HEAD", "json": {}}, "json", "HEAD request has no body"),
        ({"meta": {"x": {1, 2}}}, "meta", "not JSON"),
        ({"meta": "note"}, "meta", "expected a mapping"),
        ({"verb": "POST"}, "verb", "unknown key"),
    ],
)
def test_a_request_that_cannot_be_sent_names_its_key(
    given: dict[str, Any], key: str, reason: str
) -> None:
    with pytest.raises(RequestError) as caught:
        parse({"url": URL, **given})
    assert caught.value.key == key
    assert reason in caught.value.reason


def test_config_seeds_and_job_defaults_name_the_key() -> None:
    bad_seed = {"seeds": [URL, {"url": URL, "headers": {"X-Token": "a\nb"}}]}
    with pytest.raises(ConfigError, match=r"m.yaml: seeds\[1\].headers.X-Token: holds a newline"):
        config_from_dict(bad_seed, "m.yaml")
    with pytest.raises(ConfigError, match=r"seeds\[0\].method: expected one of"):
        config_from_dict({"seeds": [{"url": URL, "method": "PATCH"}]}, "m.yaml")
    with pytest.raises(ConfigError, match=r"seeds\[0\].job: unknown job 'nope'"):
        config_from_dict({"seeds": [{"url": URL, "job": "nope"}]}, "m.yaml")
    with pytest.raises(ConfigError, match=r"jobs.a: headers.X-A: holds a newline"):
        config_from_dict({"jobs": {"a": {"headers": {"X-A": "1\r\n"}}}}, "m.yaml")
    with pytest.raises(ConfigError, match=r"jobs.a.headers.X-A: expected str, got int"):
        config_from_dict({"jobs": {"a": {"headers": {"X-A": 1}}}}, "m.yaml")
    good = config_from_dict(
        {"seeds": [URL, {"url": URL, "method": "POST", "form": {"q": "a"}, "meta": {"n": 1}}]},
        "m.yaml",
    )
    plain, post = good.seed_list()
    assert plain.request is None and post.request is not None
    assert post.spec().method == "POST" and post.spec().meta == {"n": 1}


def test_api_seed_items_that_cannot_be_sent_are_a_400_naming_item_and_key() -> None:
    items, _ = parse_seeds({"urls": [URL, {"url": URL, "method": "POST", "json": {"q": 1}}]})
    assert items[0].request is None
    assert items[1].spec().body == b'{"q":1}'
    for item, message in [
        ({"url": URL, "method": "TRACE"}, "urls[1].method: expected one of"),
        ({"url": URL, "headers": {"X-A": 1}}, "urls[1].headers.X-A: expected a string"),
        ({"url": URL, "body": "{", "content_type": "application/json"}, "urls[1].body: not valid"),
        ({"url": URL, "verb": "x"}, "unknown key 'verb' in urls[1]"),
    ]:
        with pytest.raises(BadBody) as caught:
            parse_seeds({"urls": [URL, item]})
        assert message in str(caught.value)


# -------------------------------------------------------- wire and frontier
def test_a_plain_get_costs_nothing_on_the_wire() -> None:
    assert spec().to_wire() is None and spec().pack() is None
    bag = Bag("l", 1, "shop.test", {}, [URL], [fingerprint(URL)], [0], 0.0, 1, 5.0)
    frame = msgpack.unpackb(encode(bag))
    assert "requests" not in frame
    page = PageResult(URL, fingerprint(URL), URL, 200, 1.0, depth=0)
    (fields,) = msgpack.unpackb(encode(Results("w", "l", 1, "j", [page])))["pages"]
    assert "method" not in fields and "meta" not in fields and "link_requests" not in fields


def test_a_request_travels_whole_through_bags_results_and_the_frontier(tmp_path: Path) -> None:
    post = spec(
        method="POST",
        form={"q": "kettle"},
        headers={"X-A": "1"},
        cookies={"c": "2"},
        meta={"m": [1]},
    )
    wire = post.to_wire()
    assert RequestSpec.from_wire(URL, wire) == post
    assert RequestSpec.unpack(URL, post.pack()) == post
    bag = Bag(
        "l",
        1,
        "shop.test",
        {},
        [URL, URL + "?2"],
        [post.fingerprint(), fingerprint(URL + "?2")],
        [0, 0],
        0.0,
        1,
        5.0,
        requests=[wire, None],
    )
    assert decode(encode(bag)) == bag
    follow = spec(method="POST", form={"q": "kettle", "page": 2})
    links = link_fields([URL + "?3"], [follow])
    page = PageResult(
        URL, post.fingerprint(), URL, 200, 1.0, depth=0, method="POST", meta={"m": [1]}, **links
    )
    assert page.link_fps == [fingerprint(URL + "?3"), follow.fingerprint()]
    assert page.link_requests == [None, follow.to_wire()]
    back = decode(encode(Results("w", "l", 1, "j", [page])))
    assert isinstance(back, Results) and back.pages == [page]
    db = FrontierDB(tmp_path / "f.db")
    db.admit(
        [
            (
                db.domain_id("shop.test"),
                Row(URL, post.fingerprint(), 0, "j", 0, "shop.test", request=post.pack()),
            )
        ]
    )
    (taken,) = db.take(db.domain_id("shop.test"), "shop.test", 10, 1e12)
    assert RequestSpec.unpack(taken.url, taken.request) == post
    db.close()


def test_a_bag_or_result_with_a_made_up_request_is_refused() -> None:
    from nadird.common.errors import ProtocolError

    for wire in ({"method": "TRACE"}, {"headers": {"X": "a\nb"}}, {"body": "text"}, {"verb": 1}):
        bag = {
            "lease": "l",
            "epoch": 1,
            "domain": "d",
            "job": {},
            "urls": [URL],
            "fps": [fingerprint(URL)],
            "depths": [0],
            "delay": 0.0,
            "domain_concurrency": 1,
            "ttl": 1.0,
            "requests": [wire],
            "v": 1,
            "k": "bag",
        }
        with pytest.raises(ProtocolError):
            decode(msgpack.packb(bag, use_bin_type=True))


def test_a_schema_3_frontier_gets_the_request_column_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    db = FrontierDB(path)
    db.admit(
        [
            (
                db.domain_id("a.test"),
                Row("http://a.test/", fingerprint("http://a.test/"), 0, "j", 0, "a.test"),
            )
        ]
    )
    db.close()
    raw = sqlite3.connect(path)
    for table in ("queue", "dead_letters", "overflow", "revisits"):
        raw.execute(f"ALTER TABLE {table} DROP COLUMN request")
    raw.execute("UPDATE meta SET value='3' WHERE key='schema_version'")
    raw.commit()
    raw.close()
    again = FrontierDB(path)
    assert again.meta("schema_version") == "5"
    (row,) = again.take(again.domain_id("a.test"), "a.test", 10, 1e12)
    assert row.url == "http://a.test/" and row.request is None
    for table in ("dead_letters", "overflow", "revisits"):
        assert "request" in {c[1] for c in again._db.execute(f"PRAGMA table_info({table})")}
    again.close()


def test_seeds_file_lines_may_be_requests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    from nadird.cli.main import main

    seeds = tmp_path / "seeds.txt"
    good = json.dumps({"url": URL, "method": "POST", "form": {"q": "a"}})
    argv = ["crawl", "--seeds", str(seeds), "--state-dir", str(tmp_path / "s")]
    cases = [
        (json.dumps({"url": URL, "method": "PATCH"}), "line 3: method: expected one of"),
        (json.dumps({"url": URL, "headers": {"X-A": 3}}), "line 3: headers.X-A: expected a string"),
        ('{"url": ', "line 3: a URL or a JSON object"),
        (json.dumps({"url": URL, "job": "nope"}), "line 3: job: one of: default"),
        (json.dumps({"url": "ftp://a.test/"}), "line 3: a crawlable URL"),
    ]
    # The first through the command line (exit status and stderr as a user
    # sees them), the others in-process: the same main(), without a start each.
    line, message = cases[0]
    seeds.write_text(f"{URL}\n{good}\n{line}\n")
    proc = forkserver.run([sys.executable, "-m", "nadird", *argv], timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert f"{seeds}: {message}" in proc.stderr
    for line, message in cases[1:]:
        seeds.write_text(f"{URL}\n{good}\n{line}\n")
        assert main(argv) == 2
        assert f"{seeds}: {message}" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()  # nothing ran


def test_a_revisited_request_is_asked_again_alike(tmp_path: Path) -> None:
    from nadird.master.frontier.queues import Frontier
    from nadird.master.revisits.scheduler import Revisits

    jobs = config_from_dict({"jobs": {"shop": {"revisit": {"every": "1h"}}}}, "t.yaml").jobs
    db = FrontierDB(tmp_path / "f.db")
    wall = [1_800_000_000.0]
    revisits = Revisits(db.revisits, Frontier(db), dict(jobs), wall=lambda: wall[0])
    post = spec(method="POST", form={"q": "kettle"}, meta={"m": 1})
    page = PageResult(URL, post.fingerprint(), URL, 200, 0.0, depth=0, method="POST", signature="s")
    assert revisits.on_page(page, "shop", post.pack())
    revisits.settle([page.fp])
    wall[0] += 3601
    assert revisits.scan() == 1
    (row,) = db.take(db.domain_id("shop.test"), "shop.test", 10, wall[0])
    assert row.fp == post.fingerprint() and RequestSpec.unpack(row.url, row.request) == post
    db.close()


def test_a_walk_sets_its_page_in_a_form_or_json_body() -> None:
    from nadird.job.spec import Pagination
    from nadird.worker.follow.jsonlinks import next_request

    by_number = Pagination(param="page", until_empty="results")
    form = spec(method="POST", form={"q": "kettle"}, meta={"m": 1})
    second = next_request(by_number, {"results": ["a"]}, form)
    assert second is not None and second.body == b"page=2&q=kettle" and second.meta == {"m": 1}
    third = next_request(by_number, {"results": ["a"]}, second)
    assert third is not None and third.body == b"page=3&q=kettle"
    assert next_request(by_number, {"results": []}, second) is None  # the walk ends
    posted = spec(method="POST", json={"q": "tea", "page": 4})
    after = next_request(by_number, {"results": ["a"]}, posted)
    assert after is not None and after.body == b'{"page":5,"q":"tea"}'
    assert after.fingerprint() != posted.fingerprint()
    cursor = Pagination(next="cursor", param="after")
    nxt = next_request(cursor, {"cursor": "c2"}, posted)
    assert nxt is not None and json.loads(nxt.body) == {"after": "c2", "page": 4, "q": "tea"}
    wrong = spec(method="POST", json={"q": "tea", "page": "x"})
    assert next_request(by_number, {"results": ["a"]}, wrong) is None
