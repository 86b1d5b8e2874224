"""Business keys (job item_key): how a key is made from an item and its URL,
and how the key settings travel."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from nadird.items.keys import KEY_ERROR, UrlKey, apply_key, compile_key
from nadird.job.spec import Job, Selector


def test_a_key_of_one_field_is_its_value_and_of_several_a_json_list() -> None:
    one = compile_key(["sku"])
    two = compile_key(["brand", "sku"])
    assert apply_key(one, "u", "u", {"sku": " A-1 ", "title": "t"}) == "A-1"
    assert apply_key(one, "u", "u", {"sku": 42}) == "42"
    assert apply_key(two, "u", "u", {"brand": "Acme", "sku": 7}) == '["Acme",7]'


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"sku": None, "title": "t"}, "sku has no value"),
        ({"sku": "  ", "title": "t"}, "sku has no value"),
        ({"sku": ["a", "b"]}, "sku is not a string or an integer: ['a', 'b']"),
        ({"sku": True}, "sku is not a string or an integer: True"),
        ({"sku": "x" * 600}, "the key is longer than 512 characters"),
    ],
)
def test_an_item_without_a_usable_key_is_invalid_with_the_reason(
    data: dict[str, Any], reason: str
) -> None:
    assert apply_key(compile_key(["sku"]), "u", "u", data) is None
    assert data["_valid"] is False and data["_errors"] == {KEY_ERROR: reason}


def test_a_key_field_that_failed_its_schema_gives_no_key() -> None:
    data = {"sku": "n/a", "_valid": False, "_errors": {"sku": "type: expected integer"}}
    assert apply_key(compile_key(["sku"]), "u", "u", data) is None
    assert data["_errors"][KEY_ERROR] == "sku failed its schema (type: expected integer)"


def test_a_page_that_is_not_an_item_gets_no_key_and_no_complaint() -> None:
    data: dict[str, Any] = {"sku": None, "title": None, "links": []}
    assert apply_key(compile_key(["sku"]), "u", "u", data) is None
    assert data == {"sku": None, "title": None, "links": []}


def test_a_url_key_is_group_1_of_the_url_then_of_the_final_url() -> None:
    rule = compile_key(UrlKey(url_regex=r"/(?:item|p)/(\d+)"))
    data: dict[str, Any] = {"title": "t"}
    assert apply_key(rule, "http://s.test/p/17/slug", "http://s.test/p/17/slug", data) == "17"
    assert apply_key(rule, "http://s.test/go?id=3", "http://s.test/item/3", data) == "3"
    assert "_valid" not in data
    assert apply_key(rule, "http://s.test/about", "http://s.test/about", data) is None
    assert data["_errors"][KEY_ERROR].startswith("url_regex ")


@pytest.mark.parametrize(
    ("item_key", "message"),
    [
        (["nope"], "item_key[0]: 'nope' is not a field of the job"),
        ([], "item_key: expected at least one field name"),
        (["sku", "sku"], "item_key: a field is named twice"),
        (UrlKey(url_regex=r"/item/\d+"), "needs a group (the key is group 1)"),
        (UrlKey(url_regex=r"/item/(\d+"), "item_key.url_regex: invalid regex"),
    ],
)
def test_a_wrong_item_key_is_refused_with_the_key(item_key: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Job(fields={"sku": [Selector(css=".sku")]}, item_key=item_key)


def test_item_key_and_on_failure_travel_in_bags() -> None:
    job = Job(fields={"sku": [Selector(css=".sku")]}, item_key=UrlKey(url_regex=r"/i/(\d+)"))
    assert Job.from_wire(job.to_wire()) == job
    listed = dataclasses.replace(job, item_key=["sku"])
    assert Job.from_wire(listed.to_wire()) == listed
