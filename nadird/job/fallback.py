"""A job's `on_failure`: the job a URL goes to when this one fails it
(master/results/fallback.py does the handing on), and the check that every
fallback names another known job and that none leads back to where it began."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from nadird.common.errors import ConfigError


@dataclass(frozen=True)
class OnFailure:
    """`on_failure: {job: NAME}`: where a URL goes when this job fails it."""

    job: str


class FallsBack(Protocol):
    """What the check reads of a job (spec.py's Job builds on OnFailure, so
    this module names only the attribute it needs)."""

    @property
    def on_failure(self) -> OnFailure | None: ...


def check_fallbacks(jobs: Mapping[str, FallsBack], source: str) -> None:
    """Every `on_failure.job` names another known job, and following them
    never comes back to where it started (a URL would go round for ever)."""
    for name, job in jobs.items():
        if job.on_failure is None:
            continue
        key = f"jobs.{name}.on_failure.job"
        first = job.on_failure.job
        if first == name:
            raise ConfigError(source, key, "another job (a job cannot fall back to itself)")
        if first not in jobs:
            raise ConfigError(source, key, f"a known job, got {first!r}")
        chain = [name]
        target: str | None = first
        while target is not None and target not in chain:
            chain.append(target)
            after = jobs[target].on_failure if target in jobs else None
            target = None if after is None else after.job
        if target is not None:
            cycle = " -> ".join([*chain[chain.index(target) :], target])
            where = f"jobs.{target}.on_failure.job"  # a key on the cycle itself
            raise ConfigError(source, where, f"no cycle of fallbacks, got {cycle}")
