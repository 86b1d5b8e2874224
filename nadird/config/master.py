"""The master's sections: its sockets and state, politeness, the seen set, the store."""

from __future__ import annotations

from dataclasses import dataclass

from nadird.config.checks import not_negative, positive
from nadird.config.replica import check_replica_url, check_sftp_key


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
    # After a restart, workers that still hold bags of the previous run keep
    # them (see master/leasing/adoption.py); off: every domain is held.
    adopt_leases: bool = True
    # A worker silent this long is marked offline (default: lease_ttl).
    node_timeout: float | None = None
    dead_letter_poll: float = 2.0
    # How long after a lease ended (expired, or taken back) its holder's
    # results are still stored (default: lease_ttl); later ones are dropped.
    late_result_window: float | None = None
    # A state-dir write that failed (disk full) is tried again after this
    # back-off, doubling up to the max; give_up_after (default: never) stops
    # the master (status 1) when the failure lasts that long.
    state_retry_delay: float = 1.0
    state_retry_max_delay: float = 30.0
    state_give_up_after: float | None = None
    # Seconds between re-allocations of each domain's budget among its
    # adaptive revisits (only domains whose pages' estimates moved).
    revisit_allocate_interval: float = 60.0
    # Seconds between rounds of the jobs' history retention (a job's history:).
    history_trim_interval: float = 600.0
    # Where Litestream replicates the state directory's SQLite files (a file://,
    # s3://, gs://, abs:// or sftp:// URL; see docs/operations/replication.md).
    replica: str | None = None
    # /healthz says the replica is behind when it lags by more than this.
    replica_max_lag: float = 60.0
    # How often Litestream looks at the databases and ships their changes.
    replica_sync_interval: float = 1.0
    # How often a running master reads the replica's generation, to stop if
    # another master took the replica over (master/state/generation.py).
    replica_check_interval: float = 5.0
    # sftp:// replica: the private key Litestream logs in with (Litestream 0.5
    # takes no key from the URL, and a password in it is refused).
    replica_sftp_key: str | None = None

    def __post_init__(self) -> None:
        positive(self, "replica_max_lag", "replica_sync_interval", "replica_check_interval")
        if self.replica is not None:
            check_replica_url(self.replica)
        check_sftp_key(self.replica, self.replica_sftp_key)
        positive(self, "bag_size", "lease_ttl", "heartbeat_interval", "snapshot_interval")
        positive(self, "revisit_allocate_interval", "history_trim_interval")
        positive(self, "retry_base_delay", "retry_max_delay", "dead_letter_poll")
        positive(self, "state_retry_delay", "state_retry_max_delay")
        if self.state_give_up_after is not None and self.state_give_up_after <= 0:
            raise ValueError("state_give_up_after must be > 0")
        for name in ("max_queued_per_domain", "max_queued"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.node_timeout is not None and self.node_timeout <= 0:
            raise ValueError("node_timeout must be > 0")
        for name in ("recovery_grace", "late_result_window"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.heartbeat_interval * 2 > self.lease_ttl:
            raise ValueError("heartbeat_interval must be at most half of lease_ttl")

    @property
    def late_window(self) -> float:
        """How long after a lease ended its holder's results are still taken."""
        return self.lease_ttl if self.late_result_window is None else self.late_result_window

    @property
    def claim_window(self) -> float:
        """Seconds a restarted master waits for its workers' claims: a few
        chances to say hello."""
        return max(2.0, 4 * self.heartbeat_interval)


@dataclass(frozen=True)
class PolitenessConfig:
    delay: float = 1.0
    domain_concurrency: int = 1

    def __post_init__(self) -> None:
        not_negative(self, "delay")
        positive(self, "domain_concurrency")


@dataclass(frozen=True)
class BloomConfig:
    expected_urls: int = 10_000_000
    fp_rate: float = 0.001

    def __post_init__(self) -> None:
        positive(self, "expected_urls")
        if not 0 < self.fp_rate < 1:
            raise ValueError("fp_rate must be between 0 and 1")


@dataclass(frozen=True)
class StoreConfig:
    uri: str = "sqlite:///./nadird-state/nadird.db"
    flush_size: int = 500
    flush_interval: float = 0.5
    # The keys below apply to mongodb:// stores only (see docs/stores/mongodb.md).
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
        positive(self, "flush_size", "flush_interval")
        positive(self, "server_selection_timeout", "connect_timeout", "operation_timeout")
        positive(self, "spool_max_bytes")
        not_negative(self, "raw_retention_days", "body_max_bytes")
        if isinstance(self.write_concern, int) and self.write_concern < 1:
            # w=0 is fire-and-forget: nothing would be durable when write() returns.
            raise ValueError("write_concern must be 'majority' or a number >= 1")
        if isinstance(self.write_concern, str) and not self.write_concern:
            raise ValueError("write_concern must be 'majority' or a number >= 1")
        if self.password_env and self.password_file:
            raise ValueError("set at most one of password_env and password_file")
        if not self.spool_path:
            raise ValueError("spool_path must not be empty")
