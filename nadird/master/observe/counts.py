"""The master's numbers as the API, the console, the status report and the
alert rules read them: plain data, taken from the stages by service/view.py."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Counts:
    """The master's counters since it started."""

    stats: Counter[str]  # events: pages_ok, retries, dead_letters...
    errors: Counter[str]  # failed fetches by kind (timeout, http_404...)
    refused: Counter[str]  # results dropped, by acceptance.REASONS key
    statuses: Counter[int]  # fetched pages by final HTTP status
    invalid: Counter[tuple[str, str]]  # items that failed their schema, by (job, field)
    # URLs handed to a fallback job (on_failure), by (job, fallback job).
    fallbacks: Counter[tuple[str, str]] = field(default_factory=Counter)
    # Links of workers the master did not take as sent, by link_check.REASONS key.
    rejected_links: Counter[str] = field(default_factory=Counter)
    # Article items: fields that took their generic step, by (job, field);
    # pages whose article extraction was given up, by (job, reason).
    fallback_extractions: Counter[tuple[str, str]] = field(default_factory=Counter)
    article_given_up: Counter[tuple[str, str]] = field(default_factory=Counter)
    # Near-duplicate articles, by (job, marked or dropped).
    near_duplicates: Counter[tuple[str, str]] = field(default_factory=Counter)


@dataclass(frozen=True)
class StoreProgress:
    pending: int  # records handed to the writer, not yet durable
    written: int
    failures: int
    spool_records: int
    backpressure: bool


@dataclass(frozen=True)
class JobProgress:
    admitted: int
    paused: bool


@dataclass(frozen=True)
class JobCounts:
    """What the alert rules scoped to one job see of it."""

    stored: int  # records written this run
    dead_letters: int  # since start
    blocked: dict[str, int]  # domain -> blocking answers in a row
    domains: dict[str, tuple[int, int]]  # domain -> (pages answered, errors)


@dataclass(frozen=True)
class DomainCounters:
    """Per-domain numbers since start, by domain name (read, do not keep)."""

    results: Mapping[str, int]  # pages answered
    errors: Mapping[str, int]  # failed fetches and 4xx/5xx answers
    last_status: Mapping[str, int]
