"""Seeds into the frontier: from the config at start and reload, the API and
the console. One path for all three, so that an invalid seed is counted and
logged the same way whichever door it came in by."""

from __future__ import annotations

from collections.abc import Sequence

from nadird.common.errors import InvalidURL
from nadird.common.logs import get_logger
from nadird.job.request import RequestSpec
from nadird.master.core import MasterCore

log = get_logger()


def admit_seeds(
    core: MasterCore,
    seeds: Sequence[tuple[RequestSpec | str, str]],
    invalid: list[tuple[int, str]] | None = None,
) -> int:
    """Queue new seeds (URLs, or requests checked but for their URLs) with
    their jobs, uncommitted; returns how many were new. Each invalid URL is
    counted, logged, and appended to `invalid` as (its index, why)."""
    added = 0
    for i, (given, job) in enumerate(seeds):
        request = RequestSpec(given) if isinstance(given, str) else given
        try:
            spec = request.canonical()
        except InvalidURL as exc:
            core.stats["seeds_invalid"] += 1
            log.error("seed_invalid", url=request.url, error=str(exc))
            if invalid is not None:
                invalid.append((i, str(exc)))
            continue
        added += core.admission.admit(job, [spec.url], [spec.fingerprint()], 0, [spec.pack()])
    return added
