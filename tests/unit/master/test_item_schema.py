"""A job's schema: processor chains, invalid items, config errors, counts."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from nadird.common.errors import ConfigError
from nadird.config import load_config
from nadird.items.processors import Context
from nadird.items.schema import apply_rules, compile_rules, invalid_fields
from nadird.job.spec import FieldSpec, Job, Selector
from nadird.master.observe.metrics import MasterMetrics
from nadird.master.view.status import invalid_by_job
from nadird.testing import forkserver

CTX = Context("http://shop.test/item/7", 1_796_000_000.0)


def rules(**schema: FieldSpec) -> Any:
    return compile_rules(schema)


def test_a_valid_item_gets_clean_values_and_nothing_else() -> None:
    data = {
        "price": " 价格：2,499元 ",
        "sold": "月销 1.2万+",
        "tags": ["  new ", "sale"],
        "link": "../item/8",
        "posted": "3小时前",
        "stock": "有货",
    }
    out = apply_rules(
        data,
        rules(
            price=FieldSpec(type="number", required=True, process=["strip", "number"]),
            sold=FieldSpec(type="integer", process=["integer"]),
            tags=FieldSpec(type="string", process=["strip", {"join": ", "}]),
            link=FieldSpec(type="url", process=["url"]),
            posted=FieldSpec(type="datetime", process=[{"datetime": {"tz": "Asia/Shanghai"}}]),
            stock=FieldSpec(type="boolean", process=["boolean"]),
        ),
        CTX,
    )
    assert out == {
        "price": 2499,
        "sold": 12000,
        "tags": "new, sale",
        "link": "http://shop.test/item/8",
        "posted": "2026-11-30T05:53:20+08:00",
        "stock": True,
    }
    assert invalid_fields(out) == []


def test_failures_keep_the_clean_value_the_reason_and_the_raw_string() -> None:
    data: dict[str, Any] = {"price": "  call  us ", "title": None, "qty": "3.5", "note": "x"}
    out = apply_rules(
        data,
        rules(
            price=FieldSpec(type="number", process=["strip", "number"]),
            title=FieldSpec(required=True),
            qty=FieldSpec(process=["integer"]),
            note=FieldSpec(type="number"),
        ),
        CTX,
    )
    assert out["price"] == "call us"
    assert out["_valid"] is False
    assert out["_errors"] == {
        "price": "number: no number in 'call us'",
        "title": "required: no value",
        "qty": "integer: not a whole number: 3.5",
        "note": "type: expected number, got string 'x'",
    }
    assert out["_raw"] == {"price": "  call  us "}
    assert invalid_fields(out) == ["note", "price", "qty", "title"]


def test_regex_replace_first_and_default_in_order() -> None:
    data: dict[str, Any] = {"sku": ["", "SKU: AB-12 ", "SKU: CD-3"], "brand": None}
    out = apply_rules(
        data,
        rules(
            sku=FieldSpec(
                process=[
                    "first",
                    {"regex": {"pattern": r"SKU:\s*(\w+)-(\d+)", "group": 2}},
                    {"replace": {"pattern": "^", "with": "#"}},
                ]
            ),
            brand=FieldSpec(type="string", required=True, process=[{"default": "unbranded"}]),
        ),
        CTX,
    )
    assert out == {"sku": "#12", "brand": "unbranded"}


def test_a_job_travels_with_its_schema() -> None:
    job = Job(
        name="shop",
        fields={"price": [Selector(css=".price")]},
        schema={"price": FieldSpec(type="number", required=True, process=["number"])},
    )
    assert Job.from_wire(job.to_wire()) == job


BASE = "jobs:\n  shop:\n    fields:\n      price: [{css: .price}]\n    schema:\n"


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ("      price: {process: [numbr]}\n", "schema.price.process[0]: unknown processor 'numbr'"),
        ("      price: {type: money}\n", "type: expected one of string, number"),
        ("      price: {process: [{regex: '(\\d+'}]}\n", "schema.price.process[0]: regex: invalid"),
        ("      title: {required: true}\n", "schema.title: no selector names this field"),
        ("      price: {process: [{regex: {pattern: 'a', group: 2}}]}\n", "group 2 not in"),
        ("      price: {process: [{datetime: {tz: Mars/Base}}]}\n", "unknown time zone"),
        ("      price: {process: [{number: {decimal: ';'}}]}\n", "decimal must be"),
        ("      price: {process: [{replace: ','}]}\n", "replace: expected {pattern"),
        ("      price: {process: [{strip: 1}]}\n", "strip takes no argument"),
        ("      price: {process: [regex]}\n", "regex needs an argument"),
        ("      price: {process: [{a: 1, b: 2}]}\n", "one-key mapping"),
    ],
)
def test_schema_errors_name_the_job_and_the_field(
    tmp_path: Path, schema: str, expected: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(BASE + schema)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "jobs.shop" in info.value.key
    assert expected in str(info.value)


def test_a_bad_processor_exits_2_naming_job_and_field(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(BASE + "      price: {process: [numbr]}\n")
    proc = forkserver.run(
        [sys.executable, "-m", "nadird", "--role", "worker", "-c", str(path)], timeout=60
    )
    assert proc.returncode == 2
    assert str(path) in proc.stderr and "jobs.shop" in proc.stderr
    assert "schema.price.process[0]: unknown processor 'numbr'" in proc.stderr


def test_invalid_counts_reach_stats_and_metrics() -> None:
    counts = {("shop", "price"): 3, ("shop", "title"): 1, ("news", "date"): 2}
    assert invalid_by_job(counts) == {"news": {"date": 2}, "shop": {"price": 3, "title": 1}}
    metrics = MasterMetrics()
    state: dict[str, Any] = {
        "stats": {},
        "errors": {},
        "refused": {},
        "statuses": {},
        "invalid": counts,
        "state_write_failures": 0,
        "workers_by_status": {},
        "domains": [],
    }
    metrics.watch(lambda: state)
    text = metrics.exposition().decode()
    assert 'nadird_invalid_items_total{field="price",job="shop"} 3.0' in text
    assert 'nadird_invalid_items_total{field="date",job="news"} 2.0' in text
