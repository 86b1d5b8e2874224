"""A worker's own HTTP endpoint (worker.http): GET /healthz and GET /metrics.

So that an operator, or a probe, sees a sick worker directly rather than
through the master: /healthz answers 200 while the worker is registered and
hears from its master, 503 otherwise, with the details as JSON either way.
No token: it is read-only and binds to loopback unless configured otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from nadird.common.errors import BindError
from nadird.common.logs import get_logger
from nadird.config import WorkerHttpConfig

log = get_logger()
Read = Callable[[], dict[str, Any]]


class WorkerHttp:
    def __init__(self, config: WorkerHttpConfig, read: Read) -> None:
        self.config = config
        self._read = read
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(_HealthCollector(read))
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self.healthz)
        app.router.add_get("/metrics", self.metrics)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, self.config.host, self.config.port).start()
        except OSError as exc:
            # A second worker on the same port: one line and exit status 2, as a master says it.
            await self._runner.cleanup()
            address = f"{self.config.host}:{self.config.port}"
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise BindError(address, "worker.http.port", reason) from None
        port = self._runner.addresses[0][1]  # the real one when port 0 was asked for
        host = self.config.host if ":" not in self.config.host else f"[{self.config.host}]"
        self.url = f"http://{host}:{port}"
        log.info("worker_http_started", url=self.url)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def healthz(self, _request: web.Request) -> web.Response:
        state = self._read()
        return web.json_response(state, status=200 if state["ok"] else 503)

    async def metrics(self, _request: web.Request) -> web.Response:
        body = generate_latest(self.registry)
        return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4"})


class _HealthCollector(Collector):
    def __init__(self, read: Read) -> None:
        self._read = read

    def collect(self) -> Iterator[Metric]:
        state = self._read()
        for name, text, key in (
            ("nadird_worker_connected", "1 while registered and hearing from the master", "ok"),
            ("nadird_worker_master_silent_seconds", "Since the master spoke", "master_silent_s"),
            ("nadird_worker_bags", "Bags in flight", "bags_in_flight"),
        ):
            yield GaugeMetricFamily(name, text, value=float(state[key]))
        pages = state["pages_fetched"]
        yield CounterMetricFamily("nadird_worker_pages", "Pages fetched (errors too)", value=pages)
        statuses = CounterMetricFamily(
            "nadird_worker_http_status", "Fetched pages by HTTP status class", labels=["class"]
        )
        for klass, count in state["statuses"].items():
            statuses.add_metric([klass], count)
        yield statuses
        errors = CounterMetricFamily(
            "nadird_worker_errors", "Failed fetches by kind", labels=["kind"]
        )
        for kind, count in state["errors"].items():
            errors.add_metric([kind], count)
        yield errors
        pool = state.get("proxy_pool")
        if pool is not None:
            yield from _proxy_metrics(pool)


def _proxy_metrics(pool: dict[str, Any]) -> Iterator[Metric]:
    """Per proxy (its URL without credentials) and per provider."""
    labels = ["proxy", "group", "source"]
    requests = CounterMetricFamily("nadird_worker_proxy_requests", "Requests sent", labels=labels)
    failures = CounterMetricFamily(
        "nadird_worker_proxy_failures", "Failed requests by kind", labels=[*labels, "kind"]
    )
    score = GaugeMetricFamily("nadird_worker_proxy_score", "Score (0: dropped)", labels=labels)
    latency = GaugeMetricFamily(
        "nadird_worker_proxy_latency_seconds", "Moving average of answered requests", labels=labels
    )
    for proxy in pool["proxies"]:
        key = [proxy["proxy"], proxy["group"], proxy["source"]]
        requests.add_metric(key, proxy["requests"])
        score.add_metric(key, proxy["score"])
        if proxy["latency_s"] is not None:
            latency.add_metric(key, proxy["latency_s"])
        for kind, count in proxy["failures"].items():
            failures.add_metric([*key, kind], count)
    yield from (requests, failures, score, latency)
    yield GaugeMetricFamily("nadird_worker_proxies", "Usable proxies", value=pool["usable"])
    dropped = CounterMetricFamily(
        "nadird_worker_proxies_dropped", "Proxies dropped, by reason", labels=["reason"]
    )
    for reason, count in pool["dropped"].items():
        dropped.add_metric([reason], count)
    yield dropped
    polls = CounterMetricFamily("nadird_worker_proxy_provider_polls", "Polls", labels=["provider"])
    errors = CounterMetricFamily(
        "nadird_worker_proxy_provider_errors", "Failed polls", labels=["provider", "reason"]
    )
    for provider in pool["providers"]:
        polls.add_metric([provider["provider"]], provider["polls"])
        for reason, count in provider["errors"].items():
            errors.add_metric([provider["provider"], reason], count)
    yield from (polls, errors)
