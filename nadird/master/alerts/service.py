"""The master's alerts: channels built from the config, rules evaluated each
housekeeping tick from what the master shows (`AlertReads`), events handed to senders."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

from nadird.common.errors import ConfigError
from nadird.common.logs import get_logger
from nadird.config.alerts import AlertsConfig, ChannelConfig, RuleConfig
from nadird.config.secrets import read_secret
from nadird.master.alerts.channels import AppriseDeliver, HttpDeliver, Sender
from nadird.master.alerts.engine import AlertEngine
from nadird.master.alerts.rules import JOB_SCOPED, Snapshot, WorkerSeen
from nadird.master.leasing.nodes import NodeLeases
from nadird.master.observe.counts import Counts, JobCounts, StoreProgress
from nadird.master.revisits.changes import FieldChange

log = get_logger()


def _apprise(source: str, key: str, config: ChannelConfig, secret: str | None) -> AppriseDeliver:
    try:
        import apprise
    except ImportError:
        raise ConfigError(
            source, f"{key}.type", "apprise is not installed (pip install 'nadird[alerts]')"
        ) from None
    notifier = apprise.Apprise()
    if not notifier.add(config.url.replace("{secret}", secret or "")):
        raise ConfigError(source, f"{key}.url", "an Apprise URL that parses (see its docs)")
    return AppriseDeliver(config, notifier)


def build_senders(
    alerts: AlertsConfig, source: str, master: str, counters: Counter[str]
) -> dict[str, Sender]:
    senders = {}
    for name, config in alerts.channels.items():
        key = f"alerts.channels.{name}"
        secret = read_secret(source, f"{key}.secret", config.secret_file, config.secret_env)
        sign = read_secret(source, f"{key}.sign", config.sign_file, config.sign_env)
        deliver: HttpDeliver | AppriseDeliver
        if config.type == "apprise":
            deliver = _apprise(source, key, config, secret)
        else:
            deliver = HttpDeliver(config, secret, sign, master)
        senders[name] = Sender(name, config, deliver, counters, (secret or "", sign or ""))
    return senders


@dataclass(frozen=True)
class Needs:
    """What the rules need beyond the whole master's counts."""

    domains: bool = False  # an error_rate rule
    jobs: frozenset[str] = frozenset()  # jobs that job-scoped rules name
    queued: frozenset[str] = frozenset()  # jobs that stall rules name
    watch: dict[str, tuple[str, ...]] = field(default_factory=dict)  # change: job -> fields

    @classmethod
    def of(cls, rules: list[RuleConfig]) -> Needs:
        scoped = [r for r in rules if r.job is not None and r.type in JOB_SCOPED]
        watch: dict[str, tuple[str, ...]] = {}
        for rule in rules:
            if rule.type == "change" and rule.job is not None:
                known = watch.get(rule.job, ())
                watch[rule.job] = known + tuple(f for f in rule.fields if f not in known)
        return cls(
            any(r.type == "error_rate" for r in rules),
            frozenset(r.job for r in scoped if r.job is not None),
            frozenset(r.job for r in scoped if r.type == "stall" and r.job is not None),
            watch,
        )


class AlertReads(Protocol):
    """What the alerts read of the master at each tick. The master's whole
    view (service/view.py's MasterView) has all of it; it is declared here so
    that the alerts need nothing of the service around them."""

    def status(self) -> dict[str, Any]: ...
    def nodes(self) -> list[NodeLeases]: ...
    def store_progress(self) -> StoreProgress: ...
    def counts(self) -> Counts: ...
    def blocked_streaks(self) -> dict[str, int]: ...
    def domain_pages(self) -> dict[str, tuple[int, int]]: ...
    def job_counts(self, job: str) -> JobCounts: ...
    def job_queued(self, job: str) -> int: ...
    def take_field_changes(self) -> list[FieldChange]: ...
    def replica_lag(self) -> float | None: ...
    def replica_superseded(self) -> str | None: ...
    def watch_fields(self, watch: dict[str, tuple[str, ...]]) -> None: ...


def snapshot(view: AlertReads, now: float, needs: Needs, changes: list[FieldChange]) -> Snapshot:
    status = view.status()
    workers = tuple(
        WorkerSeen(
            entry.node.node,
            now - entry.node.last_seen,
            None if entry.node.offline_since is None else now - entry.node.offline_since,
        )
        for entry in view.nodes()
    )
    return Snapshot(
        now=now,
        queued=int(status["queued"]),  # leased URLs stay queued until stored
        stored=view.store_progress().written,
        complete=bool(status["complete"]),
        stored_total=status.get("stored_total"),
        dead_letters=view.counts().stats["dead_letters"],
        workers=workers,
        blocked=view.blocked_streaks(),
        domains=view.domain_pages() if needs.domains else {},
        changes=tuple(changes),
        replica_lag=view.replica_lag(),
        superseded=view.replica_superseded(),
    )


class Alerts:
    def __init__(
        self, alerts: AlertsConfig, source: str, master: str, counters: Counter[str]
    ) -> None:
        self.config = alerts
        self._source, self._master = source, master
        self.engine = AlertEngine(alerts.rules)
        self.senders = build_senders(alerts, source, master, counters)
        self._counters = counters
        self._needs = Needs.of(alerts.rules)
        self._stored: dict[str, int] = {}  # job -> stored at the last tick
        self._retiring: set[asyncio.Task[None]] = set()

    def start(self, view: AlertReads | None = None) -> None:
        """Start the senders; tell the master's `view` (None: senders only)
        which fields the change rules watch."""
        if view is not None:
            view.watch_fields(self._needs.watch)
        for sender in self.senders.values():
            sender.start()

    def tick(self, view: AlertReads, now: float) -> None:
        """Evaluate every rule once; hand each event to its channels."""
        if not self.engine.rules:
            return
        snap = snapshot(view, now, self._needs, view.take_field_changes())
        if self._needs.jobs:
            snap = dataclasses.replace(snap, jobs=self._job_snapshots(view, snap))
        for event in self.engine.evaluate(snap):
            log.warning(
                "alert",
                rule=event.rule.type,
                subject=event.subject,
                state=event.state,
                value=event.value,
                threshold=event.threshold,
                repeat=event.repeat,
            )
            for name in event.rule.channels:
                self.senders[name].offer(event)
        self._counters["alerts_not_numeric"] += self.engine.take_not_numeric()

    def _job_snapshots(self, view: AlertReads, snap: Snapshot) -> dict[str, Snapshot]:
        out = {}
        for job in self._needs.jobs:
            counts = view.job_counts(job)
            # A job still storing pages is no stall, whatever is queued: the
            # queue (a scan) is counted only for a job that stored nothing since.
            moved = self._stored.get(job) != counts.stored
            self._stored[job] = counts.stored
            queued = 1 if moved or job not in self._needs.queued else view.job_queued(job)
            out[job] = dataclasses.replace(
                snap,
                queued=queued,
                stored=counts.stored,
                dead_letters=counts.dead_letters,
                blocked=counts.blocked,
                domains=counts.domains,
                changes=tuple(c for c in snap.changes if c.job == job),
            )
        return out

    def reload(self, alerts: AlertsConfig, view: AlertReads) -> bool:
        """Take a changed `alerts` section (SIGHUP): new and changed channels
        start, removed ones send what they hold (up to drain_timeout) and
        stop; rules equal to running ones keep their open alerts. A channel
        that cannot start (a secret, an Apprise URL) keeps everything as it
        runs: False, logged."""
        if alerts == self.config:
            return True
        keep = {n: s for n, s in self.senders.items() if alerts.channels.get(n) == s.config}
        fresh = AlertsConfig(
            {n: c for n, c in alerts.channels.items() if n not in keep}, [], alerts.drain_timeout
        )
        try:
            started = build_senders(fresh, self._source, self._master, self._counters)
        except ConfigError as exc:
            log.error("alerts_reload_rejected", error=str(exc), kept="the running alerts")
            return False
        for sender in started.values():
            sender.start()
        gone = [s for n, s in self.senders.items() if n not in keep]
        if gone:
            retire = self._retire(gone, alerts.drain_timeout, "channel removed")
            task = asyncio.create_task(retire)
            self._retiring.add(task)
            task.add_done_callback(self._retiring.discard)
        self.senders = {**keep, **started}
        kept = self.engine.reload(alerts.rules)
        self.config, self._needs = alerts, Needs.of(alerts.rules)
        view.watch_fields(self._needs.watch)
        log.info(
            "alerts_reloaded",
            rules=len(alerts.rules),
            rules_kept=kept,
            channels_started=sorted(started),
            channels_stopped=sorted(s.name for s in gone),
        )
        return True

    @staticmethod
    async def _retire(senders: list[Sender], drain_timeout: float, why: str) -> None:
        """Give queued alerts up to drain_timeout, then stop the senders."""
        deadline = time.monotonic() + drain_timeout
        while time.monotonic() < deadline and not all(s.idle for s in senders):
            await asyncio.sleep(0.05)
        for sender in senders:
            await sender.stop(why)
            await sender.close()

    async def stop(self) -> None:
        """Give queued alerts up to drain_timeout, then stop the senders."""
        for task in list(self._retiring):
            await task
        senders = list(self.senders.values())
        await self._retire(senders, self.config.drain_timeout, "master stopping")
