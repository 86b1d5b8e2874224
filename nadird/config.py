"""Typed, frozen configuration loaded strictly from YAML.

Every section is a frozen dataclass with defaults, so a config file only names
what it changes. Unknown keys, wrong types and out-of-range values are errors
that name the file, the key and what was expected (exit status 2); a typo never
passes silently.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import re
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
    retry_base_delay: float = 2.0
    retry_max_delay: float = 600.0
    max_queued_per_domain: int | None = None
    max_queued: int | None = None
    # After a restart with queued URLs, hold dispatch this long (default:
    # lease_ttl) so bags the old master leased have stopped everywhere.
    recovery_grace: float | None = None
    # A worker silent this long is marked offline (default: lease_ttl).
    node_timeout: float | None = None
    dead_letter_poll: float = 2.0

    def __post_init__(self) -> None:
        _positive(self, "bag_size", "lease_ttl", "heartbeat_interval", "snapshot_interval")
        _positive(self, "retry_base_delay", "retry_max_delay", "dead_letter_poll")
        for name in ("max_queued_per_domain", "max_queued"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.node_timeout is not None and self.node_timeout <= 0:
            raise ValueError("node_timeout must be > 0")
        if self.recovery_grace is not None and self.recovery_grace < 0:
            raise ValueError("recovery_grace must be >= 0")
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
    # The keys below apply to mongodb:// stores only (see README, "MongoDB store").
    # "majority" or a number of members; a `w=` in the URI wins over this.
    write_concern: str | int = "majority"
    journal: bool = True
    # Short on purpose: an outage must be noticed within seconds, after which
    # batches go to the spool instead of waiting on the network.
    server_selection_timeout: float = 5.0
    connect_timeout: float = 5.0
    operation_timeout: float = 30.0
    password_env: str | None = None
    password_file: str | None = None
    spool_path: str = "./nadird-state/mongo-spool.db"
    spool_max_bytes: int = 1024 * 1024 * 1024
    raw_retention_days: int = 30
    body_max_bytes: int = 8 * 1024 * 1024

    def __post_init__(self) -> None:
        _positive(self, "flush_size", "flush_interval")
        _positive(self, "server_selection_timeout", "connect_timeout", "operation_timeout")
        _positive(self, "spool_max_bytes")
        _not_negative(self, "raw_retention_days", "body_max_bytes")
        if isinstance(self.write_concern, int) and self.write_concern < 1:
            # w=0 is fire-and-forget: nothing would be durable when write() returns.
            raise ValueError("write_concern must be 'majority' or a number >= 1")
        if isinstance(self.write_concern, str) and not self.write_concern:
            raise ValueError("write_concern must be 'majority' or a number >= 1")
        if self.password_env and self.password_file:
            raise ValueError("set at most one of password_env and password_file")
        if not self.spool_path:
            raise ValueError("spool_path must not be empty")


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


# Query/path parameters that identify a visit or a session, never a page:
# dropped from discovered links so that one page is not crawled once per
# campaign or per session. A trailing '*' matches any suffix.
# Response headers kept with each page in the store: what tells a monitoring
# job whether and when a page changes, and what it asked robots to do.
DEFAULT_STORE_HEADERS = [
    "etag",
    "last-modified",
    "cache-control",
    "expires",
    "age",
    "content-language",
    "x-robots-tag",
]
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")

DEFAULT_STRIP_PARAMS = [
    "utm_*",
    "fbclid",
    "gclid",
    "dclid",
    "gbraid",
    "wbraid",
    "msclkid",
    "yclid",
    "mc_cid",
    "mc_eid",
    "igshid",
    "_ga",
    "_gl",
    "jsessionid",
    "phpsessid",
    "aspsessionid*",
    "sessionid",
    "sid",
]


@dataclass(frozen=True)
class RobotsConfig:
    """robots.txt (RFC 9309) and per-page robots directives."""

    user_agent: str = "nadird"  # product token matched against User-agent lines
    ttl: float = 3600.0  # a fetched robots.txt is reused this long per host
    # 5xx / 429 on robots.txt: the host is taken as fully disallowed for this
    # long (its bag is handed back to rest), then robots.txt is fetched again.
    error_ttl: float = 600.0
    max_bytes: int = 512 * 1024  # RFC 9309 asks for at least 500 KiB; the rest is ignored
    max_redirects: int = 5
    max_hosts: int = 10_000  # cached hosts per worker (least recently used go first)
    respect_meta: bool = True  # <meta name=robots> and X-Robots-Tag nofollow/noindex
    respect_nofollow: bool = True  # rel=nofollow links are not followed

    def __post_init__(self) -> None:
        _positive(self, "ttl", "error_ttl", "max_bytes", "max_hosts")
        _not_negative(self, "max_redirects")
        if not self.user_agent.strip():
            raise ValueError("user_agent must not be empty")


@dataclass(frozen=True)
class ThrottleConfig:
    """How the delay between two request starts to one domain is chosen.

    delay = max(job/politeness delay, robots Crawl-delay (<= max_crawl_delay),
    adaptive delay (<= max_delay)), plus up to `jitter` times that at random.
    """

    adaptive: bool = True  # AutoThrottle-like: aim at target_concurrency from latency
    target_concurrency: float = 1.0
    start_delay: float = 0.0
    max_delay: float = 60.0
    max_crawl_delay: float = 30.0
    jitter: float = 0.0
    # 429/503: Retry-After is honoured up to max_retry_after; without one the
    # domain rests backoff_base * 2**n seconds (n = throttled answers in a row).
    backoff_base: float = 1.0
    max_retry_after: float = 3600.0
    max_domains: int = 100_000  # per-domain state kept per worker (LRU)

    def __post_init__(self) -> None:
        _positive(self, "target_concurrency", "max_domains")
        _not_negative(self, "start_delay", "max_delay", "max_crawl_delay", "jitter", "backoff_base")
        _not_negative(self, "max_retry_after")


@dataclass(frozen=True)
class TrapConfig:
    """Spider-trap guards applied to every discovered link."""

    max_url_length: int = 2048
    max_path_depth: int = 16  # path segments
    max_segment_repeats: int = 3  # the same segment this many times: /a/b/a/b/a/b/...

    def __post_init__(self) -> None:
        _positive(self, "max_url_length", "max_path_depth", "max_segment_repeats")


@dataclass(frozen=True)
class SitemapConfig:
    """Bounds on reading a host's sitemaps (jobs opt in with `sitemaps: true`)."""

    max_files: int = 20  # sitemap documents per host, indexes included
    max_urls: int = 50_000  # URLs taken per host
    max_bytes: int = 50 * 1024 * 1024  # per document, after gunzip
    max_depth: int = 2  # index -> index -> sitemap

    def __post_init__(self) -> None:
        _positive(self, "max_files", "max_urls", "max_bytes")
        _not_negative(self, "max_depth")


@dataclass(frozen=True)
class RenderConfig:
    """The headless browser of a worker with the "javascript" capability.

    One Chromium per worker, driven by Playwright; it never touches the
    network itself: every request it makes is answered by the worker's own
    fetcher (see worker/render.py and worker/subrequests.py).
    """

    executable: str = "/usr/bin/chromium"
    args: list[str] = field(default_factory=list)  # extra Chromium flags
    max_concurrent: int = 2  # pages rendered at once (one browser context each)
    launch_timeout: float = 30.0
    # Leaks: a browser is replaced after this many pages, or when its
    # processes together use more than max_memory_mb (0: no limit), checked
    # at most every memory_check_interval seconds.
    restart_after_pages: int = 500
    max_memory_mb: int = 2048
    memory_check_interval: float = 5.0
    # Per rendered page: sub-requests answered, and their decoded bytes.
    max_subrequests: int = 100
    max_page_bytes: int = 20 * 1024 * 1024
    # Scripts and stylesheets kept across pages (each page has a fresh
    # context, so Chromium's own cache is always empty); 0 bytes: none.
    cache_bytes: int = 32 * 1024 * 1024
    cache_ttl: float = 300.0

    def __post_init__(self) -> None:
        _positive(self, "max_concurrent", "launch_timeout", "restart_after_pages")
        _positive(self, "max_subrequests", "max_page_bytes", "cache_ttl")
        _not_negative(self, "max_memory_mb", "memory_check_interval", "cache_bytes")
        if not self.executable.strip():
            raise ValueError("executable must not be empty")


_PROXY_SCHEMES = ("http://", "https://", "socks4://", "socks5://")


@dataclass(frozen=True)
class ProxyConfig:
    """Outgoing proxies, used in turn; one failing max_failures times in a row
    rests for `cooldown` seconds. socks4/socks5 need the `socks` extra."""

    urls: list[str] = field(default_factory=list)
    max_failures: int = 3
    cooldown: float = 300.0

    def __post_init__(self) -> None:
        _positive(self, "max_failures", "cooldown")
        for i, url in enumerate(self.urls):
            if not url.lower().startswith(_PROXY_SCHEMES):
                raise ValueError(f"urls[{i}]: expected http://, https://, socks4:// or socks5://")


@dataclass(frozen=True)
class FetchConfig:
    user_agent: str = "nadird/0.1 (+https://example.invalid/replace-with-your-contact-page)"
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 60.0
    max_redirects: int = 10
    max_body_bytes: int = 10 * 1024 * 1024
    store_body_bytes: int = 2 * 1024 * 1024
    store_headers: list[str] = field(default_factory=lambda: list(DEFAULT_STORE_HEADERS))
    pool_size: int = 100
    allow_private: bool = False
    resolve: dict[str, str] = field(default_factory=dict)
    source_address: str | None = None
    html_types: list[str] = field(default_factory=lambda: ["text/html", "application/xhtml+xml"])
    # --- politeness and hardening (worker side) ---
    user_agents: list[str] = field(default_factory=list)  # rotated per request when set
    # Networks allowed even when allow_private is false (e.g. [10.1.0.0/16]).
    allow_networks: list[str] = field(default_factory=list)
    max_decoded_bytes: int = 10 * 1024 * 1024  # body after gzip/deflate/br decoding
    strip_params: list[str] = field(default_factory=lambda: list(DEFAULT_STRIP_PARAMS))
    robots: RobotsConfig = field(default_factory=RobotsConfig)
    throttle: ThrottleConfig = field(default_factory=ThrottleConfig)
    traps: TrapConfig = field(default_factory=TrapConfig)
    sitemaps: SitemapConfig = field(default_factory=SitemapConfig)
    proxies: ProxyConfig = field(default_factory=ProxyConfig)
    render: RenderConfig = field(default_factory=RenderConfig)

    def __post_init__(self) -> None:
        _positive(self, "connect_timeout", "read_timeout", "total_timeout", "pool_size")
        _positive(self, "max_body_bytes", "max_decoded_bytes")
        _not_negative(self, "max_redirects", "store_body_bytes")
        for i, name in enumerate(self.store_headers):
            if not isinstance(name, str) or _HEADER_NAME.fullmatch(name) is None:
                raise ValueError(f"store_headers[{i}]: not a header name: {name!r}")
        for i, network in enumerate(self.allow_networks):
            try:
                ipaddress.ip_network(network, strict=False)
            except ValueError:
                raise ValueError(f"allow_networks[{i}]: not a network: {network!r}") from None


@dataclass(frozen=True)
class SecurityConfig:
    """CurveZMQ keys (make them with `nadird keygen`) and message limits."""

    master_secret_key: str | None = None  # master: its NAME.key_secret
    worker_keys_dir: str | None = None  # master: directory of allowed workers' *.key
    worker_keys: list[str] = field(default_factory=list)  # master: allowed Z85 public keys
    master_public_key: str | None = None  # worker: the master's NAME.key
    worker_secret_key: str | None = None  # worker: its own NAME.key_secret
    insecure: bool = False  # allow a master without keys on a non-loopback address
    max_message_bytes: int = 64 * 1024 * 1024

    def __post_init__(self) -> None:
        _positive(self, "max_message_bytes")


@dataclass(frozen=True)
class ApiConfig:
    """The master's management API (HTTP). Loopback by default; every route
    but /healthz needs `Authorization: Bearer TOKEN`."""

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 5580  # 0: any free port (written to state_dir/api.json)
    token: str | None = None
    token_file: str | None = None  # default: state_dir/api.token, created if missing
    token_env: str | None = None  # name of an environment variable holding the token
    max_body_bytes: int = 1024 * 1024

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError("port must be in 0..65535")
        _positive(self, "max_body_bytes")
        if self.token is not None and len(self.token) < 16:
            raise ValueError("token must be at least 16 characters")


@dataclass(frozen=True)
class Seed:
    url: str
    job: str = "default"


@dataclass(frozen=True)
class Config:
    node: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}")
    log_level: LogLevel = "info"
    # SIGTERM: finish or hand back work, flush, snapshot; past this, give up.
    shutdown_timeout: float = 30.0
    master: MasterConfig = field(default_factory=MasterConfig)
    worker: WorkerConfig = field(default_factory=WorkerConfig)
    fetch: FetchConfig = field(default_factory=FetchConfig)
    politeness: PolitenessConfig = field(default_factory=PolitenessConfig)
    bloom: BloomConfig = field(default_factory=BloomConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    api: ApiConfig = field(default_factory=ApiConfig)
    security: SecurityConfig = field(default_factory=SecurityConfig)
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
    from nadird.worker.fields import validate_fields
    from nadird.worker.scope import validate_link_rules

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
