"""The worker's own section, and what both roles share as a service:
CurveZMQ keys and message limits, the management API."""

from __future__ import annotations

from dataclasses import dataclass, field

from nadird.config.checks import positive


@dataclass(frozen=True)
class WorkerHttpConfig:
    """A worker's own health and metrics endpoint (off unless enabled)."""

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = 5590  # 0: any free port (logged as worker_http_started)

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError("port must be in 0..65535")


@dataclass(frozen=True)
class WorkerConfig:
    # One master's addresses, or a list of masters' (the same length each),
    # tried in order: a master restored on another host is reached without
    # touching the workers (worker/masters.py).
    master: str | list[str] = "tcp://127.0.0.1:5550"
    results: str | list[str] = "tcp://127.0.0.1:5551"
    bags: int = 16
    group: str = "default"
    capabilities: list[str] = field(default_factory=lambda: ["html"])
    result_batch: int = 32
    result_flush_interval: float = 0.05
    exit_when_done: bool = False
    # No word from the master this long: log master_unreachable, then again
    # at doubling intervals (at most every 5 minutes) until it answers.
    unreachable_after: float = 10.0
    # With several masters: silent this long (and not connected), the one in
    # use is given up for the next (its bags kept for it to adopt, as after a
    # master's restart). Below master.lease_ttl: the next one adopts the bags
    # only while it holds their leases for their holders.
    master_timeout: float = 10.0
    # Lease periods a bag dropped for want of the master's answer is kept
    # for a restarted master to adopt (worker/held.py); then forgotten.
    keep_dropped_periods: float = 10.0
    http: WorkerHttpConfig = field(default_factory=WorkerHttpConfig)

    def __post_init__(self) -> None:
        positive(
            self, "bags", "result_batch", "result_flush_interval", "unreachable_after",
            "master_timeout", "keep_dropped_periods",
        )  # fmt: skip
        masters, results = _listed(self.master), _listed(self.results)
        if not masters or len(masters) != len(set(masters)):
            raise ValueError("master: expected an address or a list of distinct addresses")
        if len(results) != len(masters):
            raise ValueError(
                f"results: expected one address per worker.master address ({len(masters)}), "
                f"in the same order, got {len(results)}"
            )

    def endpoints(self) -> list[tuple[str, str]]:
        """(control, results) of each master, in the order they are tried."""
        return list(zip(_listed(self.master), _listed(self.results), strict=True))


def _listed(addresses: str | list[str]) -> list[str]:
    return [addresses] if isinstance(addresses, str) else list(addresses)


@dataclass(frozen=True)
class SecurityConfig:
    """CurveZMQ keys (make them with `nadird keygen`) and message limits."""

    master_secret_key: str | None = None  # master: its NAME.key_secret
    worker_keys_dir: str | None = None  # master: directory of allowed workers' *.key
    worker_keys: list[str] = field(default_factory=list)  # master: allowed Z85 public keys
    master_public_key: str | None = None  # worker: the master's NAME.key
    worker_secret_key: str | None = None  # worker: its own NAME.key_secret
    insecure: bool = False  # allow a master without keys on a non-loopback address
    # A mesh on this host only (loopback, ipc://) without keys configured: the
    # master makes keys in this directory and local workers read them there
    # (default: master.state_dir/keys). See protocol/local_keys.py.
    local_keys_dir: str | None = None
    # ... or, set on both, no keys: any local user's process may join.
    allow_insecure_loopback: bool = False
    max_message_bytes: int = 64 * 1024 * 1024

    def __post_init__(self) -> None:
        positive(self, "max_message_bytes")


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
    session_ttl: float = 43200.0  # seconds a web console sign-in lasts

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError("port must be in 0..65535")
        positive(self, "max_body_bytes")
        positive(self, "session_ttl")
        if self.token is not None and len(self.token) < 16:
            raise ValueError("token must be at least 16 characters")
