"""The load a worker reports with each heartbeat: CPU share and memory."""

from __future__ import annotations

import os
import resource
import time


class LoadMeter:
    def __init__(self) -> None:
        self._wall = time.monotonic()
        self._cpu = self._cpu_seconds()

    @staticmethod
    def _cpu_seconds() -> float:
        times = os.times()
        return times.user + times.system

    def cpu_percent(self) -> float:
        """Percent of one core used since the previous call."""
        wall, cpu = time.monotonic(), self._cpu_seconds()
        elapsed = wall - self._wall
        share = (cpu - self._cpu) / elapsed * 100 if elapsed > 0 else 0.0
        self._wall, self._cpu = wall, cpu
        return round(share, 1)

    @staticmethod
    def rss_mb() -> float:
        try:
            with open("/proc/self/status", encoding="ascii") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return round(int(line.split()[1]) / 1024, 1)
        except OSError:
            pass
        # Elsewhere: the peak, which is what getrusage offers.
        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
