"""Delivery: a bounded queue and a sender task per channel.

`offer` never waits: the master's loop hands an alert over and goes on. A
full queue drops the alert, counted (`alerts_dropped`) and logged. The sender
keeps to the channel's rate, tries each alert again with doubling back-off
(`alerts_retries`), and counts it sent or, after the last try, failed; either
way it is logged, never lost without a word. Secrets go into the request
only, never into a log line.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import time
import urllib.parse
from collections import Counter, deque
from typing import Any, Protocol

import aiohttp

from nadird.common.logs import get_logger
from nadird.config.alerts import ChannelConfig
from nadird.master.alerts.engine import Event
from nadird.master.alerts.escape import Format
from nadird.master.alerts.messages import payload, text

log = get_logger()


class Deliver(Protocol):
    async def __call__(self, event: Event) -> None: ...

    async def close(self) -> None: ...


class DeliveryError(Exception):
    """The receiver did not take the alert (its status, or why)."""


def dingtalk_sign(secret: str, timestamp_ms: int) -> str:
    """DingTalk's robot signature: HMAC-SHA256 of "{timestamp}\\n{secret}"
    keyed by the secret, base64, then URL-encoded."""
    digest = hmac.new(
        secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256
    ).digest()
    return urllib.parse.quote_plus(base64.b64encode(digest).decode())


class Sender:
    """One channel's queue and the task emptying it."""

    def __init__(
        self,
        name: str,
        config: ChannelConfig,
        deliver: Deliver,
        counters: Counter[str],
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self._secrets = [s for s in secrets if s]  # scrubbed from every error logged
        self.config = config
        self._deliver = deliver
        self._counters = counters
        self._queue: asyncio.Queue[Event] = asyncio.Queue(config.queue_size)
        self._sent_at: deque[float] = deque()
        self._task: asyncio.Task[None] | None = None
        self._current: Event | None = None  # taken from the queue, not yet sent or failed

    def offer(self, event: Event) -> bool:
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self._counters["alerts_dropped"] += 1
            log.error(
                "alert_dropped",
                channel=self.name,
                rule=event.rule.type,
                subject=event.subject,
                state=event.state,
                why="channel queue full",
            )
            return False
        return True

    @property
    def idle(self) -> bool:
        return self._queue.empty() and self._current is None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"alerts-{self.name}")

    async def stop(self, why: str = "master stopping") -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        left = self._queue.qsize() + (self._current is not None)
        if left:
            self._counters["alerts_dropped"] += left
            log.error("alerts_not_sent", channel=self.name, count=left, why=why)

    async def close(self) -> None:
        await self._deliver.close()

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text[:200]

    async def _run(self) -> None:
        while True:
            self._current = await self._queue.get()
            await self._keep_rate()
            await self._send(self._current)
            self._current = None

    async def _keep_rate(self) -> None:
        """At most rate_per_minute deliveries in any 60 seconds."""
        limit = self.config.rate_per_minute
        now = time.monotonic()
        while self._sent_at and now - self._sent_at[0] >= 60.0:
            self._sent_at.popleft()
        if len(self._sent_at) >= limit:
            await asyncio.sleep(60.0 - (now - self._sent_at[0]))
            self._sent_at.popleft()
        self._sent_at.append(time.monotonic())

    async def _send(self, event: Event) -> None:
        config = self.config
        delay = config.retry_delay
        for attempt in range(config.retries + 1):
            try:
                await asyncio.wait_for(self._deliver(event), config.timeout)
            except Exception as exc:  # any failure of one delivery: try again
                why = self._scrub("timed out" if isinstance(exc, TimeoutError) else str(exc))
                if attempt == config.retries:
                    self._counters["alerts_failed"] += 1
                    log.error(
                        "alert_failed",
                        channel=self.name,
                        rule=event.rule.type,
                        subject=event.subject,
                        tries=attempt + 1,
                        error=why,
                    )
                    return
                self._counters["alerts_retries"] += 1
                log.warning("alert_retry", channel=self.name, attempt=attempt + 1, error=why)
                await asyncio.sleep(delay)
                delay *= 2
                continue
            self._counters["alerts_sent"] += 1
            log.info(
                "alert_sent",
                channel=self.name,
                rule=event.rule.type,
                subject=event.subject,
                state=event.state,
            )
            return


class HttpDeliver:
    """webhook (the JSON payload) and dingtalk (a signed text message)."""

    def __init__(
        self, config: ChannelConfig, secret: str | None, sign: str | None, master: str
    ) -> None:
        self.config = config
        self._url = config.url.replace("{secret}", secret or "")
        self._bearer = secret if secret and "{secret}" not in config.url else None
        self._sign = sign
        self._master = master
        self._session: aiohttp.ClientSession | None = None

    def _request(self, event: Event) -> tuple[str, dict[str, Any], dict[str, str]]:
        language = self.config.language
        headers = {"Authorization": f"Bearer {self._bearer}"} if self._bearer else {}
        if self.config.type == "webhook":
            return self._url, payload(event, language, self._master), headers
        url = self._url
        if self._sign is not None:
            stamp = int(time.time() * 1000)
            glue = "&" if "?" in url else "?"
            url = f"{url}{glue}timestamp={stamp}&sign={dingtalk_sign(self._sign, stamp)}"
        return url, {"msgtype": "text", "text": {"content": text(event, language)}}, {}

    async def __call__(self, event: Event) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        url, body, headers = self._request(event)
        async with self._session.post(url, json=body, headers=headers) as response:
            answer = await response.read()
            if response.status >= 300:
                raise DeliveryError(f"HTTP {response.status}")
            if self.config.type == "dingtalk" and b'"errcode":0' not in answer.replace(b" ", b""):
                raise DeliveryError(f"dingtalk refused: {answer[:200]!r}")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def _native_format(target: Any) -> str:
    """What an Apprise target writes: its `?format=` or its default (the
    first it declares; Apprise before 2 declares one)."""
    resolve = getattr(target, "resolve_format", None)
    declared = resolve(None) if resolve is not None else target.notify_format
    if isinstance(declared, tuple | list):
        declared = declared[0]
    return str(getattr(declared, "value", declared))


def apprise_format(target: Any) -> tuple[Format, str]:
    """How to write for an Apprise target: the escaping of the values from
    pages and peers, and the body format to declare (so that Apprise passes
    the body on as written). HTML targets (mail, Telegram) get HTML; Slack
    gets plain text, which Apprise escapes for Slack itself (&, <, >); every
    other target gets markdown escaping, declared as what it takes, since
    chat apps that take "text" (Mattermost, Rocket.Chat) render markdown."""
    native = _native_format(target)
    if native == "html":
        return "html", "html"
    if type(target).__name__ == "NotifySlack":
        return "text", "text"
    return "markdown", native if native in ("markdown", "text") else "text"


class AppriseDeliver:
    """Any Apprise URL (mail, Slack, Telegram, WeCom, Feishu, JSON...)."""

    def __init__(self, config: ChannelConfig, notifier: Any) -> None:
        self.config = config
        self._notifier = notifier
        self._fmt, self._declared = apprise_format(notifier[0])

    async def __call__(self, event: Event) -> None:
        body = text(event, self.config.language, self._fmt)
        title = body.split(":", 1)[0]
        sent = await self._notifier.async_notify(body=body, title=title, body_format=self._declared)
        if not sent:
            raise DeliveryError("apprise could not deliver (see its log)")

    async def close(self) -> None:
        return None
