"""HTTP statuses counted by class, the same way by the worker's /healthz, the
master's /metrics and status, and `nadird crawl`'s summary."""

from __future__ import annotations


def status_class(status: int) -> str:
    """`2xx`, `3xx`, `4xx`, `5xx` (a status out of range is `other`).

    A 404 is no error: the server answered, the page is fetched and stored,
    and its status is counted by class like every other; a page's error is
    counted by its `error_kind`."""
    return f"{status // 100}xx" if 100 <= status < 600 else "other"


def status_classes(statuses: dict[int, int]) -> dict[str, int]:
    """Fetched pages by status class (2xx, 4xx...) from counts by status."""
    classes: dict[str, int] = {}
    for status, count in statuses.items():
        klass = status_class(status)
        classes[klass] = classes.get(klass, 0) + count
    return dict(sorted(classes.items()))
