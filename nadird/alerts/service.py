"""The master's alerts: channels built from the config, rules evaluated each
housekeeping tick from what `MasterView` shows, events handed to senders."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import TYPE_CHECKING

from nadird.alerts.channels import AppriseDeliver, HttpDeliver, Sender
from nadird.alerts.engine import AlertEngine
from nadird.alerts.rules import Snapshot, WorkerSeen
from nadird.config.alerts import AlertsConfig, ChannelConfig
from nadird.config.secrets import read_secret
from nadird.errors import ConfigError
from nadird.logs import get_logger

if TYPE_CHECKING:
    from nadird.master.service.view import MasterView

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


def snapshot(view: MasterView, now: float, with_domains: bool) -> Snapshot:
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
        dead_letters=view.counts().stats["dead_letters"],
        workers=workers,
        blocked=view.blocked_streaks(),
        domains=view.domain_pages() if with_domains else {},
    )


class Alerts:
    def __init__(
        self, alerts: AlertsConfig, source: str, master: str, counters: Counter[str]
    ) -> None:
        self.config = alerts
        self.engine = AlertEngine(alerts.rules)
        self.senders = build_senders(alerts, source, master, counters)
        self._counters = counters
        self._with_domains = any(r.type == "error_rate" for r in alerts.rules)

    def start(self) -> None:
        for sender in self.senders.values():
            sender.start()

    def tick(self, view: MasterView, now: float) -> None:
        """Evaluate every rule once; hand each event to its channels."""
        if not self.engine.rules:
            return
        for event in self.engine.evaluate(snapshot(view, now, self._with_domains)):
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

    async def stop(self) -> None:
        """Give queued alerts up to drain_timeout, then stop the senders."""
        deadline = time.monotonic() + self.config.drain_timeout
        while time.monotonic() < deadline and not all(s.idle for s in self.senders.values()):
            await asyncio.sleep(0.05)
        for sender in self.senders.values():
            await sender.stop()
            await sender.close()
