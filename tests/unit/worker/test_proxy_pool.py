"""The proxy pool's rules, on a clock the test moves: scores, rest, eviction,
lifetimes, stickiness, groups, whose failure it is, and providers' answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nadird.common.errors import ConfigError, ErrorKind
from nadird.config import ProviderConfig, ProviderJson, ProxyConfig
from nadird.config.proxies import ScoreConfig
from nadird.worker.fetch.proxies import Offer, ProxyPool, proxy_capabilities, redacted
from nadird.worker.fetch.proxy_sources import parse_answer


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def pool_of(clock: Clock, **config: Any) -> ProxyPool:
    return ProxyPool(ProxyConfig(**config), clock)


def offer(pool: ProxyPool, *urls: str, expires: float | None = None, keep: int = 100) -> int:
    return pool.offer("provider-0", "default", [Offer(u, expires) for u in urls], keep)


def test_a_provider_proxy_scores_down_to_zero_and_is_dropped() -> None:
    clock = Clock()
    pool = pool_of(clock, max_failures=100, score=ScoreConfig(initial=3, max=100))
    offer(pool, "http://10.0.0.1:8080")
    proxy = pool.proxies[0]
    assert proxy.score == 3
    pool.failed(proxy, ErrorKind.PROXY)
    pool.failed(proxy, ErrorKind.PROXY)
    assert proxy.score == 1 and proxy in pool.proxies
    pool.failed(proxy, ErrorKind.PROXY)
    assert pool.proxies == [] and pool.dropped == {"score": 1}
    assert pool.pick() is None  # nothing usable: never a direct connection


def test_a_success_restores_the_full_score_and_a_ban_costs_more() -> None:
    clock = Clock()
    pool = pool_of(clock, urls=["http://a:1"], max_failures=100)
    proxy = pool.proxies[0]
    pool.failed(proxy, ErrorKind.TIMEOUT, site="s.test")
    assert proxy.score == 9
    pool.succeeded(proxy, latency=0.2, site="s.test")
    assert proxy.score == 100 and proxy.failures == 0 and proxy.latency == 0.2
    pool.succeeded(proxy)  # an answer that turns out to be a ban page:
    pool.banned(proxy)
    assert proxy.score == 95 and proxy.errors["ban"] == 1


def test_failures_in_a_row_rest_a_proxy_and_a_fixed_one_at_zero_comes_back() -> None:
    clock = Clock()
    pool = pool_of(clock, urls=["http://a:1", "http://b:1"], max_failures=2, cooldown=60.0)
    a = pool.proxies[0]
    pool.failed(a)
    pool.failed(a)
    assert a.resting_until == clock.now + 60.0
    assert [pool.pick().url for _ in range(3)] == ["http://b:1"] * 3  # type: ignore[union-attr]
    clock.now += 61
    assert {pool.pick().url for _ in range(2)} == {"http://a:1", "http://b:1"}  # type: ignore[union-attr]
    # A fixed proxy is never dropped: at 0 it rests and comes back at the start score.
    strict = pool_of(clock, urls=["http://c:1"], max_failures=100, score=ScoreConfig(initial=1))
    c = strict.proxies[0]
    strict.failed(c)
    assert c in strict.proxies and c.score == 1 and c.resting_until > clock.now


def test_a_404_or_a_bad_body_is_not_the_proxys_failure() -> None:
    pool = pool_of(Clock(), urls=["http://a:1"])
    proxy = pool.proxies[0]
    assert not pool.failed(proxy, ErrorKind.TOO_LARGE, site="s.test")
    assert proxy.score == 10 and proxy.errors == {"too_large": 1}


def test_a_site_failing_through_several_proxies_is_the_sites_fault() -> None:
    pool = pool_of(Clock(), urls=["http://a:1", "http://b:1", "http://c:1"], max_failures=100)
    a, b, c = pool.proxies
    assert pool.failed(a, ErrorKind.TIMEOUT, site="down.test")  # could be the proxy
    assert not pool.failed(b, ErrorKind.TIMEOUT, site="down.test")  # two proxies: the site
    assert not pool.failed(c, ErrorKind.CONNECT, site="down.test")
    assert (a.score, b.score, c.score) == (9, 10, 10)
    assert pool.failed(c, ErrorKind.TIMEOUT, site="up.test")  # another site: c's own
    pool.succeeded(a, site="down.test")  # the site is back: blame starts over
    assert pool.failed(b, ErrorKind.TIMEOUT, site="down.test")
    # The proxy's own errors always count.
    assert pool.failed(c, ErrorKind.PROXY, site="down.test")


def test_expired_proxies_are_dropped_before_use() -> None:
    clock = Clock()
    pool = pool_of(clock)
    offer(pool, "http://10.0.0.1:1", expires=clock.now + 30)
    offer(pool, "http://10.0.0.2:1", expires=clock.now + 300)
    assert {pool.pick().url for _ in range(2)} == {"http://10.0.0.1:1", "http://10.0.0.2:1"}  # type: ignore[union-attr]
    clock.now += 29.5  # within the margin: not handed out any more
    assert [pool.pick().url for _ in range(3)] == ["http://10.0.0.2:1"] * 3  # type: ignore[union-attr]
    assert pool.dropped == {"expired": 1}
    clock.now += 300
    assert pool.pick() is None and pool.proxies == []


def test_a_provider_keeps_at_most_its_share_and_renews_known_proxies() -> None:
    clock = Clock()
    pool = pool_of(clock)
    assert offer(pool, "http://10.0.0.1:1", "http://10.0.0.2:1", keep=3) == 2
    clock.now += 1
    assert offer(pool, "http://10.0.0.2:1", "http://10.0.0.3:1", "http://10.0.0.4:1", keep=3) == 2
    assert [p.url for p in pool.proxies] == [f"http://10.0.0.{i}:1" for i in (2, 3, 4)]
    assert pool.dropped == {"overflow": 1}
    offer(pool, "http://10.0.0.2:1", expires=clock.now + 5, keep=3)
    assert pool.proxies[0].expires == clock.now + 5


def test_sticky_keys_keep_their_proxy_while_it_works() -> None:
    clock = Clock()
    pool = pool_of(clock, urls=["http://a:1", "http://b:1", "http://c:1"], max_failures=1)
    first = pool.pick(sticky="bag-1")
    other = pool.pick(sticky="bag-2")
    assert first is not None and other is not None and first is not other
    assert all(pool.pick(sticky="bag-1") is first for _ in range(5))
    pool.failed(first)  # rests: the bag moves on, and stays on the new one
    moved = pool.pick(sticky="bag-1")
    assert moved is not None and moved is not first
    assert pool.pick(sticky="bag-1") is moved
    pool.release("bag-1")
    assert pool.pick() is not None  # rotation goes on for everyone else


def test_a_retry_avoids_the_proxies_it_failed_through_and_moves_the_sticky_key() -> None:
    pool = pool_of(Clock(), urls=["http://a:1", "http://b:1"], max_failures=3)
    first = pool.pick(sticky="bag-1")
    assert first is not None
    pool.failed(first)  # counted, but it does not rest yet
    again = pool.pick(sticky="bag-1", avoid=[first])
    assert again is not None and again is not first
    assert pool.pick(sticky="bag-1") is again  # the bag stays on the one that works
    assert pool.pick(avoid=[first, again]) is None  # nothing else: no third try
    resting = pool_of(Clock(), urls=["http://a:1"], max_failures=1)
    only = resting.pick()
    assert only is not None
    resting.failed(only)  # rests; it is still the fallback, but never twice in one request
    assert resting.pick() is only and resting.pick(avoid=[only]) is None


def test_groups_limit_the_choice_and_become_capabilities() -> None:
    config = ProxyConfig(urls=["http://a:1"], groups={"cn": ["http://cn1:1", "http://cn2:1"]})
    pool = ProxyPool(config, Clock())
    picked = {pool.pick("cn").url for _ in range(4)}  # type: ignore[union-attr]
    assert picked == {"http://cn1:1", "http://cn2:1"}
    assert pool.pick("us") is None
    assert proxy_capabilities(config) == ["proxy:cn", "proxy:default"]
    assert pool.groups() == {"cn": 2, "default": 1}


def test_credentials_never_leave_the_pool() -> None:
    assert redacted("http://user:secret@10.0.0.1:8080") == "http://10.0.0.1:8080"
    pool = pool_of(Clock(), urls=["http://user:secret@10.0.0.1:8080"])
    assert "secret" not in json.dumps(pool.describe())


def provider(**overrides: Any) -> ProviderConfig:
    return ProviderConfig(url="http://127.0.0.1:9/get", **overrides)


def test_line_answers_skip_what_is_not_a_proxy() -> None:
    body = b"10.0.0.1:8080\n\nsocks5://10.0.0.2:1080\nftp://10.0.0.3:21\n10.0.0.4:99999\nnonsense\n"
    offers, skipped = parse_answer(body, provider(lifetime="2m"), 5000.0, 100.0)
    assert [o.url for o in offers] == ["http://10.0.0.1:8080", "socks5://10.0.0.2:1080"]
    assert skipped == 3
    assert all(o.expires == 220.0 for o in offers)  # the configured lifetime


def test_json_answers_with_expressions_local_expiry_and_auth() -> None:
    answer = {
        "code": 0,
        "data": [
            {"ip": "10.0.0.1", "port": 8080, "expire_time": "2026-12-01 18:00:30"},
            {"ip": "10.0.0.2", "port": 8080, "expire_time": "2026-12-01 17:59:00"},  # dead
            {"ip": "10.0.0.3", "port": "x"},
        ],
    }
    spec = ProviderJson(
        items="data",
        address="join(':', [ip, to_string(port)])",
        expires="expire_time",
        timezone="Asia/Shanghai",
    )
    wall = 1_796_119_200.0  # 2026-12-01 10:00:00 UTC, 18:00:00 in Shanghai
    offers, skipped = parse_answer(
        json.dumps(answer).encode(), provider(format="json", json=spec), wall, 50.0, "u:p@ss"
    )
    assert [o.url for o in offers] == ["http://u:p%40ss@10.0.0.1:8080"]
    assert offers[0].expires == pytest.approx(80.0)
    assert skipped == 2


def test_provider_config_errors_name_the_key() -> None:
    from nadird.config import config_from_dict

    cases = {
        "fetch.proxies.providers[0]": {"url": "ftp://x/get"},
        "fetch.proxies.providers[0].json": {"url": "http://p/get", "json": {"items": "data[("}},
        "fetch.proxies: urls[0]: 'http://h:0': expected a host and a port": None,
    }
    for key, entry in cases.items():
        proxies: dict[str, Any] = (
            {"urls": ["http://h:0"]} if entry is None else {"providers": [entry]}
        )
        with pytest.raises(ConfigError) as caught:
            config_from_dict({"fetch": {"proxies": proxies}}, "w.yaml")
        assert str(caught.value).startswith(f"w.yaml: {key}"), caught.value
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"jobs": {"j": {"proxy_group": "cn", "proxies": False}}}, "w.yaml")
    assert caught.value.key == "jobs.j"


def test_a_job_of_a_proxy_group_needs_a_worker_with_such_proxies() -> None:
    from nadird.common.typecheck import build
    from nadird.job.spec import Job

    job = build(Job, {"proxy_group": "cn", "requires": ["html"]})
    assert job.requires == ["html", "proxy:cn"]
    assert Job.from_wire(job.to_wire()) == job
    assert build(Job, {}).requires == []


def test_a_proxy_group_job_goes_only_to_workers_with_that_group(tmp_path: Path) -> None:
    from support.core_helpers import T0, bags, make_core, register

    from nadird.common.typecheck import build
    from nadird.job.spec import Job
    from nadird.protocol.messages import Heartbeat

    jobs = {"default": build(Job, {"proxy_group": "cn"})}
    for core in make_core(tmp_path, jobs=jobs):
        register(core, "plain", capabilities=["proxy:default"])
        assert bags(core) == {}  # nobody can take the job's bags
        register(core, "cn-worker", capabilities=["proxy:cn"])
        handed = bags(core, T0 + 5)
        assert handed and {b.job["proxy_group"] for b in handed.values()} == {"cn"}
        core.on_control(b"cn-worker", Heartbeat(node="cn-worker", leases=[], proxies=7), T0 + 5)
        assert core.nodes.get("cn-worker").proxies == 7  # type: ignore[union-attr]


def test_proxy_metrics_carry_no_credentials() -> None:
    from prometheus_client.exposition import generate_latest
    from prometheus_client.registry import Collector, CollectorRegistry

    from nadird.worker.service.http import _proxy_metrics

    pool = pool_of(Clock(), urls=["http://user:secret@10.0.0.1:8080", "http://10.0.0.2:8080"])
    first = pool.pick()
    assert first is not None
    pool.failed(first, ErrorKind.TIMEOUT, site="s.test")
    described = {**pool.describe(), "providers": []}

    class Once(Collector):
        def collect(self):  # type: ignore[no-untyped-def]
            return _proxy_metrics(described)

    registry = CollectorRegistry()
    registry.register(Once())
    text = generate_latest(registry).decode()
    assert "secret" not in text and "user" not in text
    labels = 'group="default",proxy="http://10.0.0.1:8080",source="fixed"'
    failures = labels.replace("proxy=", 'kind="timeout",proxy=')
    assert f"nadird_worker_proxy_failures_total{{{failures}}} 1.0" in text
    assert f"nadird_worker_proxy_score{{{labels}}} 9.0" in text
    assert "nadird_worker_proxies 2.0" in text
