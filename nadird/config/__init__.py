"""Typed, frozen configuration loaded strictly from YAML.

Every section is a frozen dataclass with defaults, so a config file only names
what it changes. Unknown keys, wrong types and out-of-range values are errors
that name the file, the key and what was expected (exit status 2); a typo never
passes silently. The sections live in master.py, fetch.py and service.py;
this module holds the whole `Config` and its loader.
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from nadird.common.errors import ConfigError
from nadird.common.typecheck import Mismatch, build
from nadird.config.alerts import AlertsConfig, check_alerts
from nadird.config.checks import non_finite
from nadird.config.console import ConsoleConfig
from nadird.config.fetch import (
    DEFAULT_STORE_HEADERS,
    DEFAULT_STRIP_PARAMS,
    FetchConfig,
    RenderConfig,
    RobotsConfig,
    SitemapConfig,
    ThrottleConfig,
    TrapConfig,
)
from nadird.config.master import BloomConfig, MasterConfig, PolitenessConfig, StoreConfig
from nadird.config.proxies import ProviderConfig, ProviderJson, ProxyConfig, ScoreConfig
from nadird.config.seeds import Seed, config_seeds
from nadird.config.service import ApiConfig, SecurityConfig, WorkerConfig, WorkerHttpConfig
from nadird.config.warc import WarcConfig
from nadird.config.yaml_strict import DuplicateKey, load_strict
from nadird.job.fallback import check_fallbacks
from nadird.job.spec import Job
from nadird.job.validate import validate_job

__all__ = [
    "DEFAULT_STORE_HEADERS",
    "DEFAULT_STRIP_PARAMS",
    "AlertsConfig",
    "ApiConfig",
    "BloomConfig",
    "Config",
    "ConsoleConfig",
    "FetchConfig",
    "LogLevel",
    "MasterConfig",
    "PolitenessConfig",
    "ProviderConfig",
    "ProviderJson",
    "ProxyConfig",
    "RenderConfig",
    "RobotsConfig",
    "ScoreConfig",
    "SecurityConfig",
    "Seed",
    "SitemapConfig",
    "StoreConfig",
    "ThrottleConfig",
    "TrapConfig",
    "WarcConfig",
    "WorkerConfig",
    "WorkerHttpConfig",
    "config_from_dict",
    "load_config",
]

LogLevel = Literal["debug", "info", "warning", "error"]


@dataclass(frozen=True)
class Config:
    node: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}")
    log_level: LogLevel = "info"
    # auto: human-readable on a terminal, JSON lines otherwise.
    log_format: Literal["auto", "json", "console"] = "auto"
    # Level of the workers' one line per page (`page_crawled`); `nadird crawl` uses info.
    log_pages: Literal["debug", "info"] = "debug"
    # SIGTERM: finish or hand back work, flush, snapshot; past this, give up.
    shutdown_timeout: float = 30.0
    master: MasterConfig = field(default_factory=MasterConfig)
    worker: WorkerConfig = field(default_factory=WorkerConfig)
    fetch: FetchConfig = field(default_factory=FetchConfig)
    politeness: PolitenessConfig = field(default_factory=PolitenessConfig)
    bloom: BloomConfig = field(default_factory=BloomConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    api: ApiConfig = field(default_factory=ApiConfig)
    console: ConsoleConfig = field(default_factory=ConsoleConfig)
    security: SecurityConfig = field(default_factory=SecurityConfig)
    alerts: AlertsConfig = field(default_factory=AlertsConfig)
    warc: WarcConfig | None = None  # no web archive unless configured
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


def check_css(selectors: list[str], key: str, source: str) -> None:
    from cssselect import SelectorError
    from lxml.cssselect import CSSSelector

    for i, selector in enumerate(selectors):
        try:
            CSSSelector(selector)
        except SelectorError as exc:
            raise ConfigError(source, f"{key}[{i}]", f"expected a CSS selector ({exc})") from None


def _check_references(config: Config, source: str) -> None:
    for i, rule in enumerate(config.alerts.rules):
        if rule.type.startswith("replica_") and config.master.replica is None:
            raise ConfigError(source, f"alerts.rules[{i}].type", f"{rule.type} with master.replica")
    for name, job in config.jobs.items():
        try:
            validate_job(job)
        except ValueError as exc:
            raise ConfigError(source, f"jobs.{name}", str(exc)) from exc
        job.revisit_policy(f"jobs.{name}.revisit", source)  # ConfigError naming the key
        if job.history is not None:
            job.history.check(f"jobs.{name}.history", source)
        check_css(job.signature_ignore, f"jobs.{name}.signature_ignore", source)
        if job.proxy_ban.selector is not None:
            check_css([job.proxy_ban.selector], f"jobs.{name}.proxy_ban.selector", source)
        for key, css in job.login.selectors() if job.login is not None else []:
            check_css([css], f"jobs.{name}.login.{key}", source)
    check_fallbacks(config.jobs, source)
    for i, seed in enumerate(config.seed_list()):
        if seed.job not in config.jobs:
            raise ConfigError(source, f"seeds[{i}].job", f"unknown job {seed.job!r}")
    fields = {name: set(job.fields) for name, job in config.jobs.items()}
    revisiting = {name for name, job in config.jobs.items() if job.revisits}
    wrong = check_alerts(config.alerts, set(config.jobs), fields, revisiting)
    if wrong is not None:
        raise ConfigError(source, *wrong)


def config_from_dict(
    data: Any, source: str, adjust: Callable[[Config], Config] | None = None
) -> Config:
    """The config `data` describes; `adjust` (a command's overrides, such as
    `nadird crawl --revisit`) is applied before the checks between sections,
    which then see the config that will run."""
    bad = non_finite(data)
    if bad is not None:
        path, value = bad
        raise ConfigError(source, path, f"expected a finite number (not .nan or .inf), got {value}")
    data = dict(data) if isinstance(data, dict) else ({} if data is None else data)
    # Read apart from the rest: a request's errors name their own keys
    # (seeds[0].headers.X-Token), which a union of types could not.
    has_seeds = isinstance(data, dict) and "seeds" in data
    seeds = config_seeds(data.pop("seeds"), source) if has_seeds else []
    try:
        config = build(Config, data)
    except Mismatch as exc:
        raise ConfigError(source, exc.path, exc.expected) from exc
    config = dataclasses.replace(config, seeds=seeds)
    config = _name_jobs(config, source)
    if adjust is not None:
        try:
            config = adjust(config)
        except Mismatch as exc:  # an override the file's rules refuse
            raise ConfigError(source, exc.path, exc.expected) from exc
    _check_references(config, source)
    return config


def load_config(
    path: str | os.PathLike[str], adjust: Callable[[Config], Config] | None = None
) -> Config:
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(source, "(file)", "file not found") from None
    except OSError as exc:
        raise ConfigError(source, "(file)", f"cannot read: {exc.strerror}") from None
    try:
        data = load_strict(text)
    except DuplicateKey as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        raise ConfigError(source, where, f"each key once per mapping: {exc.problem}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(file)"
        raise ConfigError(source, where, f"valid YAML ({getattr(exc, 'problem', exc)})") from None
    return config_from_dict(data, source, adjust)
