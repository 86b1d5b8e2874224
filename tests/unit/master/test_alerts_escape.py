"""Values from pages and peers in alert texts: hostile strings through
escape.safe in each format, and alerts carrying them to real receivers on
loopback (a webhook, Apprise's Mattermost and JSON targets)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest
from support.receiver import AlertReceiver

from nadird.config import config_from_dict
from nadird.master.alerts.engine import AlertEngine, Event
from nadird.master.alerts.escape import MAX_CHARS, safe
from nadird.master.alerts.messages import text
from nadird.master.alerts.rules import Snapshot, WorkerSeen
from nadird.master.alerts.service import Alerts
from nadird.master.revisits.changes import FieldChange

HOSTILE = (
    "@all <!channel> [Verify login](http://evil.test/login) "
    "<a href=http://evil.test>x</a> <img src=x onerror=alert(1)> "
    "\u202eevil\u202c \u2066x\u2069 <@U024BE7LH> <#C1> @here\nline2 &#64;everyone"
)
MENTIONS = ("@all", "@here", "@everyone", "<!channel>", "<@U024BE7LH>", "<#C1>")
# Short enough to be shown whole as a changed value (100 characters).
SHORT = (
    "\u202eevil\u202c \u2066x\u2069 @all <!channel> [Verify login](http://evil.test/) <img src=x>"
)
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def inert(shown: str) -> None:
    """No live mention, no bidi control, one line."""
    for mention in MENTIONS:
        assert mention not in shown
    assert not any(c in shown for c in BIDI) and "\n" not in shown
    assert "\\u202e" in shown and "\\u2066" in shown  # shown, not obeyed


def test_plain_text_keeps_the_words_and_defuses_mentions() -> None:
    shown = safe(HOSTILE, "text")
    inert(shown)
    assert shown.startswith("\uff20all \u2039!channel> [Verify login](http://evil.test/login)")
    assert safe("ops@example.org", "text") == "ops@example.org"  # no mention


def test_html_escapes_every_tag_and_entity() -> None:
    shown = safe(HOSTILE, "html")
    inert(shown)
    assert "<" not in shown and ">" not in shown and '"' not in shown
    assert "&lt;img src=x onerror=alert(1)&gt;" in shown
    assert "&amp;#64;everyone" in shown  # not an @ once rendered


def test_markdown_escapes_links_html_and_entities() -> None:
    shown = safe(HOSTILE, "markdown")
    inert(shown)
    assert r"\[Verify login\]\(http://evil.test/login\)" in shown
    assert r"\<img src=x onerror=alert\(1\)\>" in shown and r"\&#64;everyone" in shown


@pytest.mark.parametrize("fmt", ["text", "html", "markdown"])
def test_a_long_value_is_cut(fmt: Any) -> None:
    assert len(safe("a" * 10_000, fmt)) == MAX_CHARS
    assert safe("a" * 10_000, fmt).endswith("...")


def change_event(new: str = SHORT) -> Event:
    rule = config_from_dict(config("http://h/"), "t").alerts.rules[0]
    moved = FieldChange("http://shop.test/1", "shop", "price", "310.07", new)
    snap = Snapshot(now=0, queued=0, stored=0, complete=False, dead_letters=0, changes=(moved,))
    [event] = AlertEngine([rule]).evaluate(snap)
    return event


def test_a_workers_name_in_worker_gone_is_defused_too() -> None:
    rule = config_from_dict(config("http://h/"), "t").alerts.rules[1]
    snap = Snapshot(now=0, queued=0, stored=0, complete=False, dead_letters=0)
    gone = WorkerSeen("w1 @channel <!here>", 3.0, 1.0)
    [event] = AlertEngine([rule]).evaluate(Snapshot(**{**snap.__dict__, "workers": (gone,)}))
    shown = text(event, "en", "markdown")
    assert "@channel" not in shown and "<!here>" not in shown and "worker w1 \uff20channel" in shown


def config(url: str) -> dict[str, Any]:
    shop = {"fields": {"price": [{"css": ".price"}]}, "revisit": {"every": "1h"}}
    rules = [
        {"type": "change", "job": "shop", "fields": ["price"], "channels": ["c"]},
        {"type": "worker_gone", "channels": ["c"]},
    ]
    channel = {"type": "webhook" if url.startswith("http") else "apprise", "url": url}
    return {"jobs": {"shop": shop}, "alerts": {"channels": {"c": channel}, "rules": rules}}


@pytest.fixture
async def receiver() -> AsyncIterator[AlertReceiver]:
    server = AlertReceiver()
    await server.start()
    yield server
    await server.stop()


async def deliver(url: str, event: Event) -> Counter[str]:
    counters: Counter[str] = Counter()
    service = Alerts(config_from_dict(config(url), "m.yaml").alerts, "m.yaml", "m1", counters)
    service.start()
    service.senders["c"].offer(event)
    deadline = time.monotonic() + 10
    while not service.senders["c"].idle and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await service.stop()
    return counters


async def test_the_webhook_keeps_the_raw_value_in_its_data_and_a_safe_text(
    receiver: AlertReceiver,
) -> None:
    assert await deliver(receiver.url(), change_event()) == Counter({"alerts_sent": 1})
    [body] = receiver.payloads()
    assert body["details"]["new"] == SHORT  # the data as found
    inert(body["text"])
    assert "price of http://shop.test/1 went from 310.07 to \\u202eevil" in body["text"]


async def test_apprise_to_mattermost_gets_markdown_that_shows_the_value_as_text(
    receiver: AlertReceiver,
) -> None:
    pytest.importorskip("apprise")
    counters = await deliver(f"mmost://127.0.0.1:{receiver.port}/token", change_event())
    assert counters == Counter({"alerts_sent": 1})
    [request] = receiver.received
    shown = request.json()["text"].splitlines()[-1]  # after the title Apprise puts first
    inert(shown)
    assert r"\[Verify login\]\(http://evil.test/\)" in shown
    assert r"\<img src=x\>" in shown  # markdown shows it as text


async def test_apprise_to_an_html_target_gets_escaped_html(receiver: AlertReceiver) -> None:
    pytest.importorskip("apprise")
    url = f"json://127.0.0.1:{receiver.port}/apprise?format=html"
    assert await deliver(url, change_event()) == Counter({"alerts_sent": 1})
    [request] = receiver.received
    shown = request.json()["message"]
    inert(shown)
    assert "<img" not in shown and "&lt;img src=x&gt;" in shown
