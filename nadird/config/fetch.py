"""How workers fetch: timeouts and limits, robots.txt, pacing, trap guards,
sitemaps, proxies, the headless browser, and what of a page is stored."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from nadird.config.checks import not_negative, positive
from nadird.config.proxies import ProxyConfig

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

# Query/path parameters that identify a visit or a session, never a page:
# dropped from discovered links so that one page is not crawled once per
# campaign or per session. A trailing '*' matches any suffix.
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
        positive(self, "ttl", "error_ttl", "max_bytes", "max_hosts")
        not_negative(self, "max_redirects")
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
        positive(self, "target_concurrency", "max_domains")
        not_negative(self, "start_delay", "max_delay", "max_crawl_delay", "jitter", "backoff_base")
        not_negative(self, "max_retry_after")


@dataclass(frozen=True)
class TrapConfig:
    """Spider-trap guards applied to every discovered link."""

    max_url_length: int = 2048
    max_path_depth: int = 16  # path segments
    max_segment_repeats: int = 3  # the same segment this many times: /a/b/a/b/a/b/...

    def __post_init__(self) -> None:
        positive(self, "max_url_length", "max_path_depth", "max_segment_repeats")


@dataclass(frozen=True)
class CookieJarConfig:
    """Bounds on the cookie jars a worker keeps (jobs opt out with `cookie_jar: false`)."""

    max_jars: int = 500  # (job, domain, account) jars; the least recently used goes
    max_cookies: int = 50  # per jar; more new ones are not kept

    def __post_init__(self) -> None:
        positive(self, "max_jars", "max_cookies")


@dataclass(frozen=True)
class SitemapConfig:
    """Bounds on reading a host's sitemaps (jobs opt in with `sitemaps: true`)."""

    max_files: int = 20  # sitemap documents per host, indexes included
    max_urls: int = 50_000  # URLs taken per host
    max_bytes: int = 50 * 1024 * 1024  # per document, after gunzip
    max_depth: int = 2  # index -> index -> sitemap

    def __post_init__(self) -> None:
        positive(self, "max_files", "max_urls", "max_bytes")
        not_negative(self, "max_depth")


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
        positive(self, "max_concurrent", "launch_timeout", "restart_after_pages")
        positive(self, "max_subrequests", "max_page_bytes", "cache_ttl")
        not_negative(self, "max_memory_mb", "memory_check_interval", "cache_bytes")
        if not self.executable.strip():
            raise ValueError("executable must not be empty")


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
    cookie_jars: CookieJarConfig = field(default_factory=CookieJarConfig)
    proxies: ProxyConfig = field(default_factory=ProxyConfig)
    render: RenderConfig = field(default_factory=RenderConfig)

    def __post_init__(self) -> None:
        positive(self, "connect_timeout", "read_timeout", "total_timeout", "pool_size")
        positive(self, "max_body_bytes", "max_decoded_bytes")
        not_negative(self, "max_redirects", "store_body_bytes")
        for i, name in enumerate(self.store_headers):
            if not isinstance(name, str) or _HEADER_NAME.fullmatch(name) is None:
                raise ValueError(f"store_headers[{i}]: not a header name: {name!r}")
        for i, network in enumerate(self.allow_networks):
            try:
                ipaddress.ip_network(network, strict=False)
            except ValueError:
                raise ValueError(f"allow_networks[{i}]: not a network: {network!r}") from None
