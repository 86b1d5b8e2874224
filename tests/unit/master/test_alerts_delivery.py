"""Alert channels against a real HTTP receiver on loopback: the webhook's
JSON, DingTalk's signature, Apprise's JSON target, and receivers that fail
or hang (retries counted, the queue bounded, nothing lost without a count)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support.receiver import AlertReceiver, Mode

from nadird.common.errors import ConfigError
from nadird.config import config_from_dict
from nadird.master.alerts.channels import dingtalk_sign
from nadird.master.alerts.engine import AlertEngine, Event
from nadird.master.alerts.rules import Snapshot
from nadird.master.alerts.service import Alerts

SECRET = "SECabc123-not-for-logs"


@pytest.fixture
async def receiver() -> AsyncIterator[AlertReceiver]:
    server = AlertReceiver()
    await server.start()
    yield server
    await server.stop()


def blocked_event(domain: str = "a.test", streak: int = 12) -> Event:
    engine = AlertEngine(
        config_from_dict(with_channel({"type": "webhook", "url": "http://h/"}), "t").alerts.rules
    )
    snap = Snapshot(
        now=time.monotonic(),
        queued=3,
        stored=0,
        complete=False,
        dead_letters=0,
        blocked={domain: streak},
    )
    # The rule names job shop: it sees the shop's snapshot (here the same counts).
    [event] = engine.evaluate(dataclasses.replace(snap, jobs={"shop": snap}))
    return event


def with_channel(channel: dict[str, Any]) -> dict[str, Any]:
    rules = [{"type": "blocked", "count": 10, "channels": ["c"], "job": "shop"}]
    return {"jobs": {"shop": {}}, "alerts": {"channels": {"c": channel}, "rules": rules}}


def alerts(channel: dict[str, Any], counters: Counter[str]) -> Alerts:
    config = config_from_dict(with_channel(channel), "m.yaml")
    return Alerts(config.alerts, "m.yaml", "master-1", counters)


async def deliver(service: Alerts, events: list[Event], wait: float = 5.0) -> None:
    service.start()
    for event in events:
        service.senders["c"].offer(event)
    deadline = time.monotonic() + wait
    while not service.senders["c"].idle and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await service.stop()


async def test_webhook_posts_the_documented_json_with_the_token_from_a_file(
    receiver: AlertReceiver, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = tmp_path / "token"
    token.write_text(SECRET + "\n")
    counters: Counter[str] = Counter()
    channel = {
        "type": "webhook",
        "url": receiver.url(),
        "secret_file": str(token),
        "language": "zh",
    }
    await deliver(alerts(channel, counters), [blocked_event()])
    [request] = receiver.received
    assert request.headers["Authorization"] == f"Bearer {SECRET}"
    body = request.json()
    assert {k: body[k] for k in ("source", "master", "rule", "state", "subject", "job")} == {
        "source": "nadird",
        "master": "master-1",
        "rule": "blocked",
        "state": "firing",
        "subject": "a.test",
        "job": "shop",
    }
    assert body["value"] == 12 and body["threshold"] == 10 and body["language"] == "zh"
    assert "域名 a.test 连续 12 次" in body["text"]
    assert counters == Counter({"alerts_sent": 1})
    assert SECRET not in capsys.readouterr().out


async def test_dingtalk_messages_carry_a_signature_the_robot_accepts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ND_TEST_SIGN", SECRET)
    monkeypatch.setenv("ND_TEST_TOKEN", "tok-1")
    robot = AlertReceiver(dingtalk_secret=SECRET)
    await robot.start()
    try:
        counters: Counter[str] = Counter()
        channel = {
            "type": "dingtalk",
            "url": robot.url("/robot/send?access_token={secret}"),
            "secret_env": "ND_TEST_TOKEN",
            "sign_env": "ND_TEST_SIGN",
        }
        await deliver(alerts(channel, counters), [blocked_event()])
        [request] = robot.received
        assert request.query["access_token"] == "tok-1"
        assert request.json()["msgtype"] == "text"
        assert "domain a.test answered 403/429/503 12 times" in request.json()["text"]["content"]
        assert counters == Counter({"alerts_sent": 1}) and robot.bad_signatures == 0
        # A wrong signing key: the robot refuses (errcode), and that is a failure.
        monkeypatch.setenv("ND_TEST_SIGN", "SECwrong")
        channel["retries"] = 0
        await deliver(alerts(channel, counters), [blocked_event()])
        assert robot.bad_signatures == 1 and counters["alerts_failed"] == 1
    finally:
        await robot.stop()


def test_the_signature_is_dingtalks() -> None:
    # The robot documentation's recipe, done by hand for one timestamp.
    import base64
    import hashlib
    import hmac
    import urllib.parse

    digest = hmac.new(b"SECx", b"1700000000000\nSECx", hashlib.sha256).digest()
    want = urllib.parse.quote_plus(base64.b64encode(digest).decode())
    assert dingtalk_sign("SECx", 1700000000000) == want


async def test_apprise_delivers_to_a_json_url_on_loopback(receiver: AlertReceiver) -> None:
    pytest.importorskip("apprise")
    counters: Counter[str] = Counter()
    channel = {"type": "apprise", "url": f"json://127.0.0.1:{receiver.port}/apprise"}
    await deliver(alerts(channel, counters), [blocked_event()])
    [request] = receiver.received
    assert request.path == "/apprise"
    assert "domain a.test answered 403/429/503 12 times" in request.json()["message"]
    assert counters == Counter({"alerts_sent": 1})


def test_an_apprise_url_that_does_not_parse_names_the_key() -> None:
    pytest.importorskip("apprise")
    with pytest.raises(ConfigError) as info:
        alerts({"type": "apprise", "url": "nosuchscheme://x"}, Counter())
    assert info.value.key == "alerts.channels.c.url"


def test_a_missing_secret_names_the_key(tmp_path: Path) -> None:
    channel = {"type": "webhook", "url": "http://127.0.0.1:9/", "secret_file": str(tmp_path / "x")}
    with pytest.raises(ConfigError) as info:
        alerts(channel, Counter())
    assert info.value.key == "alerts.channels.c.secret_file"


@pytest.mark.parametrize("mode", ["fail", "hang"])
async def test_a_failing_receiver_is_retried_then_counted_as_failed(
    receiver: AlertReceiver,
    mode: Mode,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    receiver.mode = mode
    monkeypatch.setenv("ND_TEST_TOKEN", SECRET)
    counters: Counter[str] = Counter()
    channel = {
        "type": "webhook",
        "url": receiver.url("/hook?token={secret}"),
        "secret_env": "ND_TEST_TOKEN",
        "retries": 2,
        "retry_delay": 0.01,
        "timeout": 0.3,
    }
    started = time.monotonic()
    await deliver(alerts(channel, counters), [blocked_event()])
    assert receiver.attempts == 3 and receiver.received == []
    assert counters == Counter({"alerts_retries": 2, "alerts_failed": 1})
    assert time.monotonic() - started < 3
    out = capsys.readouterr().out
    assert "alert_failed" in out and SECRET not in out


async def test_the_queue_is_bounded_and_what_does_not_fit_is_counted(
    receiver: AlertReceiver,
) -> None:
    receiver.mode = "hang"
    counters: Counter[str] = Counter()
    channel = {
        "type": "webhook",
        "url": receiver.url(),
        "queue_size": 2,
        "retries": 0,
        "timeout": 5,
    }
    service = alerts(channel, counters)
    service.start()
    sender = service.senders["c"]
    taken = [sender.offer(blocked_event(f"d{i}.test")) for i in range(6)]
    assert taken == [True, True, False, False, False, False]
    assert counters["alerts_dropped"] == 4
    await asyncio.sleep(0.1)  # the sender took one; it hangs on the receiver
    await service.stop()  # drain_timeout passes: the one sending and the one queued count too
    assert counters["alerts_dropped"] == 6 and counters["alerts_sent"] == 0


async def test_the_rate_limit_holds_back_what_is_over_it(receiver: AlertReceiver) -> None:
    counters: Counter[str] = Counter()
    channel = {"type": "webhook", "url": receiver.url(), "rate_per_minute": 2}
    service = alerts(channel, counters)
    service.start()
    for i in range(3):
        service.senders["c"].offer(blocked_event(f"d{i}.test"))
    await asyncio.sleep(0.5)
    assert len(receiver.received) == 2  # the third waits for the minute to pass
    await service.stop()
    assert counters == Counter({"alerts_sent": 2, "alerts_dropped": 1})
