"""Rendering settings: job keys, worker keys, and what needs no browser."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from nadird.cli.crawl import CrawlOptions, crawl_config
from nadird.common.errors import ConfigError, FetchError
from nadird.common.urls import fingerprint
from nadird.config import Config, FetchConfig, config_from_dict
from nadird.items.schema import ERRORS, VALID
from nadird.job.spec import JAVASCRIPT, Job
from nadird.protocol.messages import PageResult
from nadird.worker.fetch.fetcher import FetchOutcome
from nadird.worker.render.exchange import SubRequest
from nadird.worker.render.step import RenderStep, missing_fields, new_renderer, wants_render
from nadird.worker.render.subrequests import SubrequestPolicy

FIELDS: dict[str, Any] = {"title": [{"css": "h1"}], "price": [{"css": ".price"}]}


def load(job: dict[str, Any], **top: Any) -> Config:
    return config_from_dict({"jobs": {"spa": job}, **top}, "test.yaml")


def test_a_job_that_renders_requires_the_javascript_capability() -> None:
    config = load({"fields": FIELDS, "render": True, "requires": ["gpu"]})
    assert config.jobs["spa"].requires == ["gpu", JAVASCRIPT]
    assert load({"fields": FIELDS, "render": "auto"}).jobs["spa"].requires == [JAVASCRIPT]
    assert load({"fields": FIELDS}).jobs["spa"].requires == []
    # Through the wire (the bag's job dict) it stays what it was.
    job = config.jobs["spa"]
    assert Job.from_wire(job.to_wire()) == job


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ({"render": "yes"}, "expected bool or"),
        ({"render": "auto"}, "needs fields"),
        ({"fields": FIELDS, "render": True, "render_block": ["pictures"]}, "unknown resource"),
        ({"fields": FIELDS, "render": True, "render_when_missing": ["sku"]}, "not a field"),
        ({"fields": FIELDS, "render": True, "render_max_wait": 0}, "render_max_wait"),
        ({"fields": FIELDS, "render": True, "render_wait": "idle"}, "one of"),
        ({"fields": FIELDS, "render": True, "render_quiet": 0}, "render_quiet"),
        ({"fields": FIELDS, "render_when_invalid": True}, "needs render: auto"),
        ({"fields": FIELDS, "render": True, "render_when_invalid": True}, "needs render: auto"),
    ],
)
def test_bad_render_keys_name_the_job(job: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        load(job)
    assert caught.value.key.startswith("jobs.spa")


def test_a_rendering_job_waits_for_the_page_to_settle_by_default() -> None:
    spa = load({"fields": FIELDS, "render": True}).jobs["spa"]
    assert (spa.render_wait, spa.render_quiet) == ("settle", 0.5)
    quick = load({"fields": FIELDS, "render": True, "render_wait": "load", "render_quiet": 2})
    assert (quick.jobs["spa"].render_wait, quick.jobs["spa"].render_quiet) == ("load", 2.0)


def test_bad_browser_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="max_concurrent"):
        config_from_dict({"fetch": {"render": {"max_concurrent": 0}}}, "w.yaml")
    with pytest.raises(ConfigError, match="unknown key"):
        config_from_dict({"fetch": {"render": {"chrome": "/bin/x"}}}, "w.yaml")


def test_a_worker_without_a_browser_refuses_the_capability(tmp_path: Path) -> None:
    assert new_renderer(Config()) is None  # no javascript capability: nothing to check
    missing = str(tmp_path / "no-chromium")
    config = config_from_dict(
        {
            "worker": {"capabilities": ["html", JAVASCRIPT]},
            "fetch": {"render": {"executable": missing}},
        },
        "w.yaml",
    )
    with pytest.raises(ConfigError, match="executable Chromium"):
        new_renderer(config)


def test_crawl_render_flag_renders_the_default_job_and_equips_workers() -> None:
    base = Config()
    plain = crawl_config(CrawlOptions(seeds=["http://a.test/"]), base, "/tmp/x")
    assert JAVASCRIPT not in plain.worker.capabilities
    assert plain.jobs["default"].render is False
    rendered = crawl_config(CrawlOptions(seeds=["http://a.test/"], render=True), base, "/tmp/x")
    assert rendered.jobs["default"].render is True
    assert JAVASCRIPT in rendered.jobs["default"].requires
    assert JAVASCRIPT in rendered.worker.capabilities
    # A job of the --config file that renders equips them too, without --render.
    spa = load({"fields": FIELDS, "render": "auto"})
    assert JAVASCRIPT in crawl_config(CrawlOptions(seeds=[]), spa, "/tmp/x").worker.capabilities


def test_auto_mode_decides_from_the_required_fields() -> None:
    job = load({"fields": FIELDS, "render": "auto"}).jobs["spa"]
    assert missing_fields(job, {"title": "T", "price": None}) == ["price"]
    assert missing_fields(job, {"title": "T", "price": "1"}) == []
    # Not extracted on purpose (noindex, canonical elsewhere): not missing.
    assert missing_fields(job, {}) == []
    only_title = load({"fields": FIELDS, "render": "auto", "render_when_missing": ["title"]})
    assert missing_fields(only_title.jobs["spa"], {"title": "T", "price": None}) == []
    assert missing_fields(only_title.jobs["spa"], {"title": [], "price": "1"}) == ["title"]


def test_auto_mode_renders_an_invalid_item_only_when_asked() -> None:
    schema = {"price": {"type": "number"}}
    invalid = {"title": "T", "price": "--", VALID: False, ERRORS: {"price": "not a number"}}
    asked = load(
        {"fields": FIELDS, "render": "auto", "schema": schema, "render_when_invalid": True}
    )
    plain = load({"fields": FIELDS, "render": "auto", "schema": schema})
    assert wants_render(asked.jobs["spa"], invalid) is True
    assert wants_render(plain.jobs["spa"], invalid) is False
    assert wants_render(asked.jobs["spa"], {"title": "T", "price": 1.5}) is False
    assert wants_render(plain.jobs["spa"], {"title": "T", "price": None}) is True  # missing


def _outcome() -> FetchOutcome:
    return FetchOutcome(200, "http://a.test/", "text/html", "utf-8", b"<h1></h1>")


def test_a_render_job_on_a_worker_without_browser_is_an_error() -> None:
    job = load({"fields": FIELDS, "render": True}).jobs["spa"]
    fetch = FetchConfig()
    policy = SubrequestPolicy(None, job, fetch.render, "a.test")  # type: ignore[arg-type]
    step = RenderStep(None, job, policy, fetch)

    def build(outcome: FetchOutcome) -> PageResult:
        raise AssertionError("a page that must render is never built unrendered")

    def fail(error: FetchError) -> PageResult:
        url = "http://a.test/"
        return PageResult(
            url, fingerprint(url), url, 0, 0.0, 0, error=error.message, error_kind=error.kind
        )

    result = asyncio.run(step.result(_outcome(), build, fail))
    assert result.error is not None and result.error.startswith("render_unavailable:")


@pytest.mark.parametrize(
    ("request_", "reason"),
    [
        (SubRequest("http://a.test/next", "GET", "document", navigation=True), "navigation"),
        (SubRequest("http://a.test/api", "POST", "fetch"), "method"),
        (SubRequest("ws://a.test/live", "GET", "websocket"), "scheme"),
        (SubRequest("http://a.test/logo.png", "GET", "image"), "type_image"),
        (SubRequest("http://a.test/font.woff", "GET", "font"), "type_font"),
        (SubRequest("http://cdn.other.test/lib.js", "GET", "script"), "third_party"),
        (SubRequest("http://[::1/x", "GET", "script"), "invalid_url"),
    ],
)
def test_static_sub_request_rules(request_: SubRequest, reason: str) -> None:
    job = load({"fields": FIELDS, "render": True}).jobs["spa"]
    policy = SubrequestPolicy(None, job, FetchConfig().render, "a.test")  # type: ignore[arg-type]
    refusal = policy.refusal(request_)
    assert refusal is not None and refusal.reason == reason
    # Same domain, another host, a script: allowed (fetched by the worker).
    assert policy.refusal(SubRequest("http://static.a.test/app.js", "GET", "script")) is None


def test_the_subresource_cache_keeps_scripts_and_styles_for_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    from nadird.worker.render.cache import SubresourceCache
    from nadird.worker.render.exchange import Fulfil

    now = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    cache = SubresourceCache(max_bytes=400, ttl=60)
    script = Fulfil(200, "application/javascript", b"x" * 100)
    cache.put("http://a.test/app.js", "script", script)
    cache.put("http://a.test/api", "fetch", script)  # varies by page: never kept
    cache.put("http://a.test/gone.js", "script", Fulfil(404, None, b""))
    cache.put("http://a.test/big.js", "script", Fulfil(200, None, b"x" * 101))  # > a quarter
    assert cache.get("http://a.test/app.js", "script") == script
    assert cache.get("http://a.test/api", "fetch") is None
    assert cache.get("http://a.test/gone.js", "script") is None
    assert cache.get("http://a.test/big.js", "script") is None
    for i in range(4):  # bounded in bytes: the least recently used goes first
        cache.put(f"http://a.test/{i}.css", "stylesheet", Fulfil(200, "text/css", b"y" * 100))
    assert cache.get("http://a.test/app.js", "script") is None
    assert cache.get("http://a.test/3.css", "stylesheet") is not None
    now[0] += 61
    assert cache.get("http://a.test/3.css", "stylesheet") is None
