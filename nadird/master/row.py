"""A queued URL as the frontier hands it out: the one row every stage of the
master passes along (admission, leasing, results, revisits, the state tables)."""

from __future__ import annotations

from dataclasses import dataclass

# The `via` of a seed: no page led to it.
VIA_SEED = "seed"


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
    # The page whose link admitted the URL (VIA_SEED; None: not known). Written
    # at admission only: rows read back for leasing leave it out (the archive
    # reads it by row id, FrontierDB.vias).
    via: str | None = None
