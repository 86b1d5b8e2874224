"""How long a job keeps its pages' history (`history:` of a job).

A revisiting job appends a version per change of a page (store/history.py);
without a limit the history only grows. `keep_for` drops versions older
than that, `keep_versions` all but the newest N of each URL; with both, a
version goes when either says so. The latest version of a URL is never
dropped: it is what the next fetch is compared with, and the page's current
state. The master applies the limits in the background (master/results/
retention.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from nadird.common.errors import ConfigError
from nadird.revisit.durations import EXAMPLE, parse_duration


@dataclass(frozen=True)
class HistoryKeep:
    """A job's history retention; neither key set keeps everything."""

    # Versions older than this go (a duration: 90d, 12w, 36h), except each URL's latest.
    keep_for: str | float | None = None
    # At most this many versions per URL, the newest (1 keeps the latest only).
    keep_versions: int | None = None

    def max_age(self) -> float | None:
        """Seconds of `keep_for` (checked by `check` when the config loads)."""
        return None if self.keep_for is None else parse_duration(self.keep_for)

    def check(self, key: str, source: str) -> None:
        """ConfigError naming the key (e.g. jobs.shop.history.keep_for)."""
        if self.keep_for is not None:
            try:
                self.max_age()
            except ValueError as exc:
                raise ConfigError(source, f"{key}.keep_for", str(exc) or EXAMPLE) from None
        versions = self.keep_versions
        if versions is not None and (isinstance(versions, bool) or versions < 1):
            raise ConfigError(source, f"{key}.keep_versions", f"an integer >= 1, got {versions!r}")

    @property
    def trims(self) -> bool:
        return self.keep_for is not None or self.keep_versions is not None
