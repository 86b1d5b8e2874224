"""Message types exchanged between master and workers.

Each message is a dataclass with named fields; on the wire it is a msgpack map
carrying the protocol version `v` and the kind `k` beside those fields (see
codec.py). Lists that travel side by side (urls/fps) are checked for equal
length here, so a handler never has to.

Socket use:
  worker DEALER -> master ROUTER: Hello, Credit, Heartbeat, BagDone, Bye
  master ROUTER -> worker DEALER: Welcome, Refused, Pong, Reset, Bag, Shutdown
  worker PUSH   -> master PULL:   Results (carrying Welcome.session; see
                                  master/acceptance.py for what is accepted)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, get_args

from nadird.common.errors import ErrorKind
from nadird.common.record import SPARSE_FIELD, PageContent, PageFetch
from nadird.items.keys import MAX_KEY_CHARS
from nadird.job.request import METHODS, check_cookies
from nadird.protocol.exchange import Exchange
from nadird.protocol.limits import (
    MAX_HELD,
    MAX_PAGES,
    MAX_SESSION,
    MAX_TOKEN,
    MAX_URL,
    MAX_URLS,
    MAX_VALIDATOR,
    check_fps,
    check_lease_ids,
    check_names,
    check_requests,
    check_urls,
    same_length,
)


@dataclass(frozen=True, slots=True)
class HeldBag:
    """A bag a worker still holds when it says hello (the master it came
    from may have restarted): the new master may adopt its lease."""

    lease: str
    epoch: int
    domain: str
    session: bytes  # the Welcome.session the bag came under: proof of holding it
    # The URLs whose results it has sent and still keeps (they may not have
    # been stored): the master asks for those still queued again.
    sent: list[bytes] = field(default_factory=list)
    # The bag was finished and its BagDone sent (maybe to the master that
    # died): the URLs not in `sent` were handed back.
    done: bool = False

    def __post_init__(self) -> None:
        check_names(lease=self.lease, domain=self.domain)
        if len(self.session) > MAX_SESSION:
            raise ValueError(f"session: longer than {MAX_SESSION} bytes")
        if len(self.sent) > MAX_URLS:
            raise ValueError(f"sent: more than {MAX_URLS} fingerprints")
        check_fps("sent", self.sent)


@dataclass(frozen=True, slots=True)
class Hello:
    KIND: ClassVar[str] = "hello"
    node: str
    capacity: int
    group: str = "default"
    capabilities: list[str] = field(default_factory=list)
    pid: int = 0
    version: str = ""
    host: str = ""  # the worker's host name, for operators (ZeroMQ hides the peer)
    held: list[HeldBag] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_names(node=self.node, group=self.group, version=self.version, host=self.host)
        if not 0 < self.capacity <= 10_000 or len(self.capabilities) > 64:
            raise ValueError("capacity must be 1..10000, at most 64 capabilities")
        if len(self.held) > MAX_HELD:
            raise ValueError(f"held: more than {MAX_HELD} bags")


@dataclass(frozen=True, slots=True)
class Welcome:
    KIND: ClassVar[str] = "welcome"
    node: str
    heartbeat_interval: float
    lease_ttl: float
    # A random token of this registration, to be echoed in every Results: it
    # ties the results socket (PULL, no identities) to the control connection.
    session: bytes = b""
    # Leases of Hello.held this master took over (master/leasing/adoption.py),
    # and per lease the fingerprints of HeldBag.sent to send again (under the
    # new session). A held bag not listed must be dropped at once.
    adopted: list[str] = field(default_factory=list)
    resend: list[list[bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        same_length(adopted=self.adopted, resend=self.resend)
        for fps in self.resend:
            check_fps("resend", fps)


@dataclass(frozen=True, slots=True)
class Credit:
    """The worker can take `bags` more bags (credit-based flow control)."""

    KIND: ClassVar[str] = "credit"
    node: str
    bags: int


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Liveness; renews every lease listed."""

    KIND: ClassVar[str] = "heartbeat"
    node: str
    leases: list[str]
    inflight: int = 0
    seq: int = 0
    cpu_percent: float = 0.0  # of one core, since the last heartbeat
    rss_mb: float = 0.0
    proxies: int = 0  # usable proxies in the worker's pool
    # Leases of finished bags the worker keeps for a restarted master, until
    # this one says their results are stored (Pong.settled; worker/held.py).
    # Sparse: left out while empty, so a master of the version before reads
    # the heartbeats of a worker that keeps no finished bag.
    finished: list[str] = field(default_factory=list, metadata=SPARSE_FIELD)

    def __post_init__(self) -> None:
        check_lease_ids("finished", self.finished)


@dataclass(frozen=True, slots=True)
class Pong:
    """The master's answer to a heartbeat: proof of contact, so a worker cut
    off from the master stops its bags before their leases can expire."""

    KIND: ClassVar[str] = "pong"
    seq: int
    # Those of Heartbeat.finished whose results this master has stored (and
    # committed the end of their lease): the worker may forget them.
    # Sparse: left out while empty, so a worker of the version before (which
    # lists no finished bag) reads this master's Pongs.
    settled: list[str] = field(default_factory=list, metadata=SPARSE_FIELD)

    def __post_init__(self) -> None:
        check_lease_ids("settled", self.settled)


@dataclass(frozen=True, slots=True)
class Refused:
    """The master will not register this worker (e.g. its node name is in use)."""

    KIND: ClassVar[str] = "refused"
    reason: str


@dataclass(frozen=True, slots=True)
class Reset:
    """The master does not know this worker (it restarted): drop every bag
    without reporting, and say hello again."""

    KIND: ClassVar[str] = "reset"
    reason: str


@dataclass(frozen=True, slots=True)
class RobotsNote:
    """A robots.txt a worker fetched, passed through the master so the next
    worker to get the domain does not fetch it again at once."""

    origin: str  # scheme://host[:port]
    allow_all: bool  # 4xx: no rules
    text: str  # the file (empty when allow_all)
    age: float  # seconds since it was fetched

    def __post_init__(self) -> None:
        if len(self.origin) > MAX_URL or len(self.text) > 600 * 1024:
            raise ValueError("robots note too large")


@dataclass(frozen=True, slots=True)
class SessionNote:
    """One account's login session for a (job, domain): handed out with its
    bags, reported back by the worker that logged in. A note replaces the
    master's only with a higher `version` (a stale report changes nothing).
    `rest`: seconds from now before the account's rate allows a request."""

    account: str
    version: int
    cookies: dict[str, str] = field(default_factory=dict)
    token: str = ""
    rest: float = 0.0

    def __post_init__(self) -> None:
        check_names(account=self.account)
        check_cookies(self.cookies, "cookies")
        if len(self.token) > MAX_TOKEN or len(self.cookies) > 64:
            raise ValueError(f"session: a token of at most {MAX_TOKEN}, at most 64 cookies")


@dataclass(frozen=True, slots=True)
class Bag:
    """Up to bag_size URLs of ONE domain and ONE job, under a lease."""

    KIND: ClassVar[str] = "bag"
    lease: str
    epoch: int
    domain: str
    job: dict[str, Any]
    urls: list[str]
    fps: list[bytes]
    depths: list[int]
    delay: float
    domain_concurrency: int
    ttl: float
    robots: list[RobotsNote] = field(default_factory=list)
    # The URLs' rows in the master's queue, echoed in each PageResult so that
    # a result arriving after its lease ended is found without a search.
    rows: list[int] = field(default_factory=list)
    # Which try each URL is on (1 = first), for the worker's page log line.
    attempts: list[int] = field(default_factory=list)
    # A revisit's validators from its last fetch, [ETag, Last-Modified] per
    # URL ("" when absent), sent as If-None-Match / If-Modified-Since.
    validators: list[list[str]] = field(default_factory=list)
    # How to ask for each URL (RequestSpec.to_wire(), None: a plain GET);
    # empty, and not sent at all, when every URL of the bag is a plain GET.
    requests: list[dict[str, Any] | None] = field(default_factory=list, metadata=SPARSE_FIELD)
    # The job's login sessions on this domain, one per account that has one.
    sessions: list[SessionNote] = field(default_factory=list, metadata=SPARSE_FIELD)
    # Bytes of each response body to send back as it was received, for the
    # web archive (PageResult.exchanges); 0: none, nothing captured.
    archive: int = field(default=0, metadata=SPARSE_FIELD)

    def __post_init__(self) -> None:
        same_length(urls=self.urls, fps=self.fps, depths=self.depths)
        check_requests("requests", self.urls, self.requests)
        if self.rows:
            same_length(urls=self.urls, rows=self.rows)
        if self.attempts:
            same_length(urls=self.urls, attempts=self.attempts)
        if self.validators:
            same_length(urls=self.urls, validators=self.validators)
            if any(len(v) != 2 or max(map(len, v)) > MAX_VALIDATOR for v in self.validators):
                raise ValueError(f"validators: [etag, last-modified] of at most {MAX_VALIDATOR}")
        check_fps("fps", self.fps)
        check_urls("urls", self.urls)
        if self.archive < 0:
            raise ValueError("archive: at least 0")


@dataclass(frozen=True, slots=True)
class BagDone:
    """The worker finished a bag. `returned` are fingerprints it did not fetch.

    `wait` is how many seconds from now the domain must rest before its next
    request: relative, because master and worker clocks are not comparable.
    """

    KIND: ClassVar[str] = "bag_done"
    node: str
    lease: str
    epoch: int
    returned: list[bytes] = field(default_factory=list)
    wait: float = 0.0
    # Among `returned`: the URL(s) a 429/503 answered. They count as attempts.
    throttled: list[bytes] = field(default_factory=list)
    robots: list[RobotsNote] = field(default_factory=list)  # fetched during this bag
    # Every account's session as the bag left it (new logins with a higher
    # version), and the logins that failed during the bag (with why, no secret).
    sessions: list[SessionNote] = field(default_factory=list, metadata=SPARSE_FIELD)
    login_failures: int = field(default=0, metadata=SPARSE_FIELD)
    login_error: str = field(default="", metadata=SPARSE_FIELD)

    def __post_init__(self) -> None:
        if len(self.login_error) > MAX_URL:
            raise ValueError(f"login_error: longer than {MAX_URL} characters")
        check_fps("returned", self.returned)
        check_fps("throttled", self.throttled)


@dataclass(frozen=True, slots=True)
class Bye:
    KIND: ClassVar[str] = "bye"
    node: str


@dataclass(frozen=True, slots=True)
class Shutdown:
    """The master is going away (crawl complete or stopping)."""

    KIND: ClassVar[str] = "shutdown"
    reason: str
    done: bool = False


# Not frozen, unlike the other messages: it shares its fields with the
# (mutable) store record, and dataclasses must share their bases' frozenness.
@dataclass(slots=True)
class PageResult(PageContent, PageFetch):
    """One fetched page: the record's facts (nadird.common.record) and what only the
    master needs from the wire."""

    links: list[str] = field(default_factory=list)
    link_fps: list[bytes] = field(default_factory=list)
    elapsed: float = 0.0  # seconds the fetch took (for the latency histogram)
    row: int = 0  # the URL's Bag.rows entry (0: unknown)
    size: int = 0  # body bytes received (before fetch.store_body_bytes cuts `body`)
    # The response's validators, kept in the master's revisit schedule.
    etag: str = ""
    last_modified: str = ""
    # Links that are requests of their own (RequestSpec.to_wire() per link,
    # None: a plain GET; link_fps then hold RequestSpec.fingerprint()).
    # Empty, and not sent, when every link is a plain GET.
    link_requests: list[dict[str, Any] | None] = field(default_factory=list, metadata=SPARSE_FIELD)
    # The HTTP exchanges as they happened, when the bag asked (Bag.archive).
    exchanges: list[Exchange] = field(default_factory=list, metadata=SPARSE_FIELD)
    # Per link, the document it was read from when not this page ("": the
    # page's own link): a sitemap, or robots.txt for the sitemaps it lists.
    # Empty, and not sent, when every link is the page's own.
    link_vias: list[str] = field(default_factory=list, metadata=SPARSE_FIELD)
    # The body was byte for byte the last exchange's, and left out (None):
    # sent once, not twice (protocol/bodies.py). Not sent when False.
    body_in_exchange: bool = field(default=False, metadata=SPARSE_FIELD)

    def __post_init__(self) -> None:
        check_fps("fp", [self.fp])
        check_urls("exchanges", [e.url for e in self.exchanges])
        if self.body_in_exchange and (self.body is not None or not self.exchanges):
            raise ValueError("body_in_exchange: without a body, with exchanges")
        same_length(links=self.links, link_fps=self.link_fps)
        check_requests("link_requests", self.links, self.link_requests)
        if self.method != "GET" and self.method not in METHODS:
            raise ValueError(f"method: one of {', '.join(METHODS)}")
        check_fps("link_fps", self.link_fps)
        check_urls("links", [self.url, self.final_url, *self.links])
        if self.link_vias:
            same_length(links=self.links, link_vias=self.link_vias)
            check_urls("link_vias", self.link_vias)
        # Kept in the revisit schedule and sent back in bags (Bag checks the
        # same bound): a longer one would make every later bag of the URL fail.
        if max(len(self.etag), len(self.last_modified), len(self.signature or "")) > MAX_VALIDATOR:
            raise ValueError(f"etag, last_modified, signature: at most {MAX_VALIDATOR} characters")
        if self.item_key is not None and len(self.item_key) > MAX_KEY_CHARS:
            raise ValueError(f"item_key: at most {MAX_KEY_CHARS} characters")
        if self.error is None and self.error_kind is not None:
            raise ValueError("error_kind without an error")
        if self.error_kind is None and self.error is not None:
            # An older worker's result: the kind is the text's "kind:" part.
            # A kind this master does not know never gets here: decode refuses it.
            object.__setattr__(self, "error_kind", ErrorKind.of_message(self.error))


@dataclass(frozen=True, slots=True)
class Results:
    """A batch of page results from one lease; each page acks its URL."""

    KIND: ClassVar[str] = "results"
    node: str
    lease: str
    epoch: int
    job: str
    pages: list[PageResult]
    session: bytes = b""  # Welcome.session of the registration the bag came under

    def __post_init__(self) -> None:
        if len(self.pages) > MAX_PAGES:
            raise ValueError(f"pages: more than {MAX_PAGES}")
        if len(self.session) > MAX_SESSION:
            raise ValueError(f"session: longer than {MAX_SESSION} bytes")
        check_names(node=self.node, lease=self.lease, job=self.job)


Message = (
    Hello
    | Welcome
    | Refused
    | Credit
    | Heartbeat
    | Pong
    | Reset
    | Bag
    | BagDone
    | Bye
    | Shutdown
    | Results
)

MESSAGE_TYPES: dict[str, type[Message]] = {cls.KIND: cls for cls in get_args(Message)}
