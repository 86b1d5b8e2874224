"""Fallback jobs: a URL one job failed goes to the job its `on_failure` names.

Two failures hand a URL on: its retries ran out (it would be a dead letter)
or its item is invalid (a required field missing, a value that failed its
schema, no item key). The URL's queue row is given to the other job, with
fresh attempts and `fallback_from` = the job that failed it, so the page's
record says both; nothing of the failed attempt is stored, and the URL
leaves the frontier only once the other job's result is durable, as always.
The retries `render: auto` makes happen on the worker, before the result
comes back, so an item invalid here stayed invalid after them.

A job without `on_failure`, or whose `on_failure` job was deleted since
(the API's DELETE /api/jobs), dead-letters and stores as before. Config
loading refuses unknown jobs and cycles (fallback_jobs.check_fallbacks), so a URL
is handed on at most once per job.
"""

from __future__ import annotations

from collections import Counter

from nadird.common.logs import get_logger
from nadird.master.frontier.admission import Admission
from nadird.master.frontier.queues import Frontier
from nadird.master.row import Row

log = get_logger()


class Fallbacks:
    def __init__(self, frontier: Frontier, admission: Admission) -> None:
        self._frontier = frontier
        # The jobs as they are now (reloads and deletions replace or change them).
        self._admission = admission
        self.handed: Counter[tuple[str, str]] = Counter()  # (from job, to job)

    def target(self, job: str) -> str | None:
        """The job `job` hands its failures to, if it names one that exists."""
        jobs = self._admission.jobs
        found = jobs.get(job)
        if found is None or found.on_failure is None:
            return None
        name = found.on_failure.job
        return name if name in jobs else None

    def hand_over(self, row: Row, why: str) -> bool:
        """Give the URL to its job's fallback job; False if it has none."""
        target = self.target(row.job)
        if target is None:
            return False
        self._frontier.hand_over(row, target, why)
        self.handed[row.job, target] += 1
        log.info("url_handed_over", url=row.url, job=row.job, to=target, why=why[:200])
        return True
