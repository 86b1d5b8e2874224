"""Typed, frozen configuration loaded strictly from YAML.

Every section is a frozen dataclass with defaults, so a config file only names
what it changes. Unknown keys, wrong types and out-of-range values are errors
that name the file, the key and what was expected (exit status 2); a typo never
passes silently.
"""

from __future__ import annotations

import dataclasses
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from nadird.errors import ConfigError
from nadird.jobs import Job
from nadird.typecheck import Mismatch, build

LogLevel = Literal["debug", "info", "warning", "error"]


def _positive(obj: object, *names: str) -> None:
    for name in names:
        if getattr(obj, name) <= 0:
            raise ValueError(f"{name} must be > 0")


def _not_negative(obj: object, *names: str) -> None:
    for name in names:
        if getattr(obj, name) < 0:
            raise ValueError(f"{name} must be >= 0")


@dataclass(frozen=True)
class MasterConfig:
    bind: str = "tcp://127.0.0.1:5550"
    results_bind: str = "tcp://127.0.0.1:5551"
    state_dir: str = "./nadird-state"
    bag_size: int = 50
    lease_ttl: float = 30.0
    heartbeat_interval: float = 2.0
    snapshot_interval: float = 60.0
    exit_when_done: bool = False

    def __post_init__(self) -> None:
        _positive(self, "bag_size", "lease_ttl", "heartbeat_interval", "snapshot_interval")
        if self.heartbeat_interval * 2 > self.lease_ttl:
            raise ValueError("heartbeat_interval must be at most half of lease_ttl")


@dataclass(frozen=True)
class PolitenessConfig:
    delay: float = 1.0
    domain_concurrency: int = 1

    def __post_init__(self) -> None:
        _not_negative(self, "delay")
        _positive(self, "domain_concurrency")


@dataclass(frozen=True)
class BloomConfig:
    expected_urls: int = 10_000_000
    fp_rate: float = 0.001

    def __post_init__(self) -> None:
        _positive(self, "expected_urls")
        if not 0 < self.fp_rate < 1:
            raise ValueError("fp_rate must be between 0 and 1")


@dataclass(frozen=True)
class StoreConfig:
    uri: str = "sqlite:///./nadird-state/nadird.db"
    flush_size: int = 500
    flush_interval: float = 0.5

    def __post_init__(self) -> None:
        _positive(self, "flush_size", "flush_interval")


@dataclass(frozen=True)
class WorkerConfig:
    master: str = "tcp://127.0.0.1:5550"
    results: str = "tcp://127.0.0.1:5551"
    bags: int = 16
    group: str = "default"
    capabilities: list[str] = field(default_factory=lambda: ["html"])
    result_batch: int = 32
    result_flush_interval: float = 0.05
    exit_when_done: bool = False

    def __post_init__(self) -> None:
        _positive(self, "bags", "result_batch", "result_flush_interval")


@dataclass(frozen=True)
class FetchConfig:
    user_agent: str = "nadird/0.1 (+set fetch.user_agent to a contact URL)"
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 60.0
    max_redirects: int = 10
    max_body_bytes: int = 10 * 1024 * 1024
    store_body_bytes: int = 2 * 1024 * 1024
    pool_size: int = 100
    allow_private: bool = False
    resolve: dict[str, str] = field(default_factory=dict)
    source_address: str | None = None
    html_types: list[str] = field(default_factory=lambda: ["text/html", "application/xhtml+xml"])

    def __post_init__(self) -> None:
        _positive(self, "connect_timeout", "read_timeout", "total_timeout", "pool_size")
        _positive(self, "max_body_bytes")
        _not_negative(self, "max_redirects", "store_body_bytes")


@dataclass(frozen=True)
class Seed:
    url: str
    job: str = "default"


@dataclass(frozen=True)
class Config:
    node: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}")
    log_level: LogLevel = "info"
    master: MasterConfig = field(default_factory=MasterConfig)
    worker: WorkerConfig = field(default_factory=WorkerConfig)
    fetch: FetchConfig = field(default_factory=FetchConfig)
    politeness: PolitenessConfig = field(default_factory=PolitenessConfig)
    bloom: BloomConfig = field(default_factory=BloomConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    jobs: dict[str, Job] = field(default_factory=lambda: {"default": Job()})
    seeds: list[str | Seed] = field(default_factory=list)

    def seed_list(self) -> list[Seed]:
        return [Seed(url=s) if isinstance(s, str) else s for s in self.seeds]


def _name_jobs(config: Config, source: str) -> Config:
    """A job's name is its key in `jobs`; a conflicting `name:` is an error."""
    named: dict[str, Job] = {"default": Job()}  # seeds name no job: they use this one
    for key, job in config.jobs.items():
        if job.name not in ("default", key):
            raise ConfigError(source, f"jobs.{key}.name", f"must equal the key {key!r}")
        named[key] = dataclasses.replace(job, name=key)
    return dataclasses.replace(config, jobs=named)


def _check_references(config: Config, source: str) -> None:
    from nadird.worker.parser import validate_fields, validate_link_rules

    for name, job in config.jobs.items():
        try:
            validate_fields(job.fields)
            validate_link_rules(job.links)
        except ValueError as exc:
            raise ConfigError(source, f"jobs.{name}", str(exc)) from exc
    for i, seed in enumerate(config.seed_list()):
        if seed.job not in config.jobs:
            raise ConfigError(source, f"seeds[{i}].job", f"unknown job {seed.job!r}")


def config_from_dict(data: Any, source: str) -> Config:
    try:
        config = build(Config, data if data is not None else {})
    except Mismatch as exc:
        raise ConfigError(source, exc.path, exc.expected) from exc
    config = _name_jobs(config, source)
    _check_references(config, source)
    return config


def load_config(path: str | os.PathLike[str]) -> Config:
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(source, "(file)", "file not found") from None
    except OSError as exc:
        raise ConfigError(source, "(file)", f"cannot read: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        raise ConfigError(source, where, f"valid YAML ({getattr(exc, 'problem', exc)})") from None
    return config_from_dict(data, source)
