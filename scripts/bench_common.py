"""What several benchmark scripts measure alike: memory, and pages per second."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any


def rss_mb() -> float:
    """This process's resident memory now, in MiB (Linux /proc)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Throughput:
    """Pages per wall and per CPU second of a run dataclass with `records`,
    `seconds` and `cpu_seconds` fields, and the run as a dict with both."""

    records: int
    seconds: float
    cpu_seconds: float

    @property
    def pages_per_s(self) -> float:
        return self.records / self.seconds

    @property
    def pages_per_cpu_s(self) -> float:
        return self.records / self.cpu_seconds

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),  # type: ignore[call-overload]
            "pages_per_s": round(self.pages_per_s, 1),
            "pages_per_cpu_s": round(self.pages_per_cpu_s, 1),
        }
