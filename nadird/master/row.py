"""A queued URL as the frontier hands it out: the one row every stage of the
master passes along (admission, leasing, results, revisits, the state tables)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Row:
    """A queued URL as the frontier hands it out."""

    url: str
    fp: bytes
    depth: int
    job: str
    priority: int
    domain: str
    attempts: int = 0
    id: int = 0  # rowid in the queue table; 0 until admitted
    fallback_from: str | None = None  # the job that handed the URL to `job` (on_failure)
    # RequestSpec.pack() of a request that is more than a plain GET (None).
    request: bytes | None = None
