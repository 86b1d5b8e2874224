"""The replica's series on the master's /metrics (see service/replica.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector


@dataclass(frozen=True)
class ReplicaReading:
    lag_seconds: float
    up: bool  # Litestream runs
    restarts: int  # times it was started again after it ended
    failures: int  # its exits and its ERROR lines


class ReplicaCollector(Collector):
    def __init__(self, read: Callable[[], ReplicaReading]) -> None:
        self._read = read

    def collect(self) -> Iterator[Metric]:
        now = self._read()
        yield GaugeMetricFamily(
            "nadird_replica_lag_seconds",
            "Age of the oldest state-dir change not yet on the replica (0: all there)",
            value=now.lag_seconds,
        )
        yield GaugeMetricFamily("nadird_replica_up", "1 while Litestream runs", value=now.up)
        yield CounterMetricFamily(
            "nadird_replica_restarts", "Times Litestream was started again", value=now.restarts
        )
        yield CounterMetricFamily(
            "nadird_replica_failures",
            "Litestream's exits and the errors it logged",
            value=now.failures,
        )
