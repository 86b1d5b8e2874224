"""Crawls of a login-protected section (tests/support/members.py) by real
master and worker processes: one login per account for the whole cluster,
one re-login when the sessions expire mid-crawl, accounts spread under
their rates, a wrong password that pauses the domain instead of hammering
the form, and no password or session anywhere in logs, store or metrics."""

from __future__ import annotations

import itertools
import json
import signal
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.members import PREFIX, MembersArea
from test_api import api, request

from nadird.testing.cluster import Cluster, wait_until, worker_address
from nadird.testing.web import SyntheticWeb, run_in_thread

pytestmark = pytest.mark.slow
PASSWORD = "correct-horse-battery-staple"
HOST = "members.test"


def members_job(web: SyntheticWeb, login: dict[str, Any]) -> dict[str, Any]:
    return {
        "members": {
            "fields": {"title": [{"css": "h1.title"}]},
            "login": {"url": f"http://{HOST}:{web.port}{PREFIX}/login", **login},
        }
    }


FORM_LOGIN = {
    "form": {"user": "{user}", "password": "{password}"},
    "expired": {"statuses": [401], "selector": "form#login"},
}


def start(cluster: Cluster, web: SyntheticWeb, login: dict[str, Any], **master: Any) -> None:
    seeds = [{"url": f"http://{HOST}:{web.port}{PREFIX}/p/0", "job": "members"}]
    config = cluster.master_config(
        jobs=members_job(web, login),
        seeds=seeds,
        master={"bag_size": 3, **master},
        politeness={"delay": 0.05},
    )
    cluster.start("master", "master", config)


def leaks(cluster: Cluster, secrets: list[str], metrics: bytes, stats: bytes) -> list[str]:
    """Where any of the secrets shows up: process logs, the store's files, /metrics."""
    files = [*cluster.workdir.glob("*.log"), *cluster.workdir.glob("store.db*")]
    found = []
    for path in files:
        data = path.read_bytes()
        found += [f"{path.name}: {s[:6]}..." for s in secrets if s.encode() in data]
    for name, text in (("/metrics", metrics), ("/api/stats", stats)):
        found += [f"{name}: {s[:6]}..." for s in secrets if s.encode() in text]
    return found


def test_two_workers_share_one_login_and_expiry_logs_in_once_more(cluster: Cluster) -> None:
    area = MembersArea({"alice": PASSWORD}, pages=30, expire_after=20)
    env = {"MEMBERS_PASSWORD": PASSWORD}
    login = {**FORM_LOGIN, "accounts": [{"user": "alice", "password_env": "MEMBERS_PASSWORD"}]}
    first, second = worker_address(1), worker_address(2)
    with run_in_thread() as web:
        area.install(web)
        start(cluster, web, login, exit_when_done=False)
        url, token = api(cluster)
        w1 = cluster.start("worker", "w1", cluster.worker_config(1), env=env)
        assert wait_for(lambda: sum(s.client == first for s in area.served_log()) >= 8, 30)
        cluster.start("worker", "w2", cluster.worker_config(2), env=env)
        w1.kill(signal.SIGTERM)  # w2 goes on with w1's session
        assert wait_for(lambda: stats_of(url, token).get("complete") is True, 60)
        _, metrics = request(url, "/metrics", token)
        _, stats = request(url, "/api/stats", token)
        served, logins = area.served_log(), area.ok_logins()
    # One login for the cluster, one more after the expiry: none by w2 at first.
    assert len(logins) == 2, logins
    assert logins[0].client == first
    by_second = [s for s in served if s.client == second]
    assert by_second and by_second[0].session == logins[0].session
    assert {s.client for s in served if s.user == "alice"} == {first, second}
    # The pages that met the expired session were asked again, and stored.
    records = {r.url.rsplit("/", 1)[1]: r for r in cluster.records()}
    assert sorted(map(int, records)) == list(range(30))
    assert all(r.status == 200 and r.data["title"].startswith("members") for r in records.values())
    assert not any("login" in r.final_url for r in records.values())
    state = cluster.workdir / "state" / "sessions.json"
    assert state.stat().st_mode & 0o777 == 0o600
    secrets = [PASSWORD, *(entry.session for entry in logins)]
    assert leaks(cluster, secrets, metrics, stats) == []


def test_two_accounts_share_the_pages_at_their_rates(cluster: Cluster) -> None:
    area = MembersArea({"alice": "pw-alice", "bob": "pw-bob"}, pages=16)
    interval = 0.25
    login = {
        "url": "",  # set below
        "json": {"user": "{user}", "password": "{password}"},
        "token": {"jmes": "auth.token"},
        "expired": {"statuses": [401]},
        "accounts": [
            {"user": "alice", "password_env": "PW_ALICE", "rate_per_minute": 60 / interval},
            {"user": "bob", "password_env": "PW_BOB", "rate_per_minute": 60 / interval},
        ],
    }
    with run_in_thread() as web:
        area.install(web)
        login["url"] = f"http://{HOST}:{web.port}{PREFIX}/api/login"
        # The master stays up for the /metrics and /api/stats reads after the
        # pages: a crawl that finishes first would take its API with it.
        start(cluster, web, login, bag_size=5, exit_when_done=False)
        url, token = api(cluster)
        env = {"PW_ALICE": "pw-alice", "PW_BOB": "pw-bob"}
        worker = cluster.worker_config(1)
        cluster.start("worker", "w1", worker, env=env)
        assert wait_for(lambda: len({s.path for s in area.served_log() if s.user}) >= 16, 60)
        _, metrics = request(url, "/metrics", token)
        _, stats = request(url, "/api/stats", token)
        served, logins = area.served_log(), area.ok_logins()
    assert sorted(entry.user for entry in logins) == ["alice", "bob"]
    for user in ("alice", "bob"):
        starts = [s.t for s in served if s.user == user]
        assert len(starts) >= 5, (user, len(starts))
        gaps = [b - a for a, b in itertools.pairwise(starts)]
        assert min(gaps) >= interval * 0.8, (user, gaps)
    # Each account has a cookie jar of its own: the cookie a page set for
    # one account went back with that account's requests only.
    owners = [(s.user, s.owner) for s in served if s.user is not None]
    assert {owner for _user, owner in owners} == {"", "alice", "bob"}
    assert all(owner in ("", user) for user, owner in owners), owners
    secrets = ["pw-alice", "pw-bob", *(entry.session for entry in logins)]
    assert leaks(cluster, secrets, metrics, stats) == []


def test_a_wrong_password_pauses_the_domain_after_max_failures(
    cluster: Cluster, tmp_path: Path
) -> None:
    area = MembersArea({"alice": PASSWORD}, pages=5)
    secret = tmp_path / "password"
    secret.write_text("not-the-password\n")
    account = {"user": "alice", "password_file": str(secret)}
    login = {**FORM_LOGIN, "accounts": [account], "max_failures": 2, "pause": 600}
    with run_in_thread() as web:
        area.install(web)
        start(cluster, web, login, exit_when_done=False)
        url, token = api(cluster)
        cluster.start("worker", "w1", cluster.worker_config(1))

        def logins_state() -> dict[str, Any]:
            found: dict[str, Any] = stats_of(url, token).get("logins", {})
            return found.get(f"members/{HOST}", {})

        assert wait_for(lambda: logins_state().get("state") == "login_failed", 30)
        tried = len(area.logins)
        assert not wait_for(lambda: len(area.logins) > tried, 3)  # no hammering
        status = logins_state()
        _, metrics = request(url, "/metrics", token)
        families = {f.name: f for f in text_string_to_metric_families(metrics.decode())}
        _, stats = request(url, "/api/stats", token)
        # Resumed through the API: the login is tried again.
        assert request(url, "/api/jobs/members/resume", token, "POST")[0] == 200
        assert wait_for(lambda: len(area.logins) > tried, 10)
    assert tried == 2 and not area.ok_logins() and not area.served_log()
    assert status["failures"] == 2 and "answered 200 without a session" in status["error"]
    assert families["nadird_login_failures"].samples[0].value == 2
    paused = [e for e in cluster.proc("master").logs() if e.get("event") == "login_paused"]
    assert len(paused) == 1 and paused[0]["domain"] == HOST
    assert leaks(cluster, ["not-the-password"], metrics, stats) == []


CSRF_PATH = f"{PREFIX}/csrf/login"


def csrf_login(web: SyntheticWeb, **rules: Any) -> dict[str, Any]:
    url = f"http://{HOST}:{web.port}{CSRF_PATH}"
    account = {"user": "alice", "password_env": "MEMBERS_PASSWORD"}
    return {**FORM_LOGIN, "url": url, "prefetch": url, "accounts": [account], **rules}


def test_a_login_first_fetches_its_form_for_the_csrf_token_and_cookie(cluster: Cluster) -> None:
    area = MembersArea({"alice": PASSWORD}, pages=10)
    csrf = {"css": "input[name=csrf]", "field": "csrf"}
    with run_in_thread() as web:
        area.install(web)
        start(cluster, web, csrf_login(web, csrf=csrf), exit_when_done=False)
        url, token = api(cluster)
        env = {"MEMBERS_PASSWORD": PASSWORD}
        cluster.start("worker", "w1", cluster.worker_config(1), env=env)
        assert wait_for(lambda: stats_of(url, token).get("complete") is True, 60)
        entries = [e for e in web.entries() if e.path == CSRF_PATH]
        logins = area.ok_logins()
    assert len(logins) == 1 and area.csrf_refused == 0
    # The form first, then the login with its cookie and its token (the
    # one pair the form handed out, used up by the login).
    assert [e.method for e in entries] == ["GET", "POST"]
    assert "csrftoken=" in entries[1].headers["cookie"] and "csrf=" in entries[1].body
    assert area.csrf == {}
    records = cluster.records()
    assert len(records) == 10
    assert all(r.status == 200 and r.data["title"].startswith("members") for r in records)
    assert {s.session for s in area.served_log()} == {logins[0].session}


def test_a_login_without_the_csrf_token_fails_and_says_so(cluster: Cluster) -> None:
    area = MembersArea({"alice": PASSWORD}, pages=3)
    with run_in_thread() as web:
        area.install(web)
        # The form is fetched (its cookie goes along) but its token is not sent.
        start(cluster, web, csrf_login(web, max_failures=1), exit_when_done=False)
        url, token = api(cluster)
        env = {"MEMBERS_PASSWORD": PASSWORD}
        cluster.start("worker", "w1", cluster.worker_config(1), env=env)

        def logins_state() -> dict[str, Any]:
            found: dict[str, Any] = stats_of(url, token).get("logins", {})
            return found.get(f"members/{HOST}", {})

        assert wait_for(lambda: logins_state().get("state") == "login_failed", 30)
        status = logins_state()
    assert area.csrf_refused == 1 and not area.ok_logins() and not area.served_log()
    assert "answered 403" in status["error"]


def stats_of(url: str, token: str) -> dict[str, Any]:
    status, body = request(url, "/api/stats", token)
    assert status == 200, body
    stats: dict[str, Any] = json.loads(body)
    return stats


def wait_for(predicate: Any, timeout: float) -> bool:
    return wait_until(predicate, timeout, 0.05)
