"""A job's login without servers: the config's checks, the job's wire form,
the messages that carry sessions, and the master's book of sessions
(versions, failures and pauses, the 0600 file, a status without secrets)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nadird.common.errors import ConfigError
from nadird.common.typecheck import build
from nadird.config import config_from_dict
from nadird.job.login import CsrfRule, LoginSpec
from nadird.job.spec import Job
from nadird.master.leasing.login_sessions import SessionBook
from nadird.protocol.codec import decode, encode
from nadird.protocol.messages import Bag, BagDone, SessionNote
from nadird.worker.fetch.fetcher import FetchOutcome
from nadird.worker.fetch.login_form import csrf_token
from nadird.worker.fetch.login_sessions import SecretReader

LOGIN: dict[str, Any] = {
    "url": "http://members.test/login",
    "form": {"user": "{user}", "password": "{password}", "remember": "1"},
    "accounts": [{"user": "alice", "password_env": "PW"}],
}


FORM = "http://members.test/login"


def config_error(login: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        config_from_dict({"jobs": {"j": {"login": login}}}, "m.yaml")
    return str(caught.value)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"accounts": [{"user": "alice", "password": "hunter2"}]},
            "m.yaml: jobs.j.login.accounts[0].password: unknown key",
        ),
        (
            {"accounts": [{"user": "a"}]},
            "jobs.j.login.accounts[0]: exactly one of password_env or password_file",
        ),
        ({"json": {"u": "{user}"}}, "jobs.j.login: login: exactly one of form or json"),
        ({"accounts": []}, "at least one account"),
        ({"token": {"jmes": "a["}}, "jobs.j.login.token: token.jmes: invalid JMESPath"),
        ({"expired": {"selector": "form[["}}, "jobs.j.login.expired.selector[0]: expected a CSS"),
        ({"expired": {"statuses": [99]}}, "expired.statuses[0]: expected an HTTP status"),
        (
            {"accounts": [{"user": "a", "password_env": "P", "rate_per_minute": 0}]},
            "rate_per_minute must be > 0",
        ),
        (
            {"accounts": [{"name": "x", "user": "a", "password_env": "P"}] * 2},
            "two accounts of one name",
        ),
        (
            {"csrf": {"css": "input[name=csrf]", "field": "csrf"}},
            "jobs.j.login: login.csrf: needs login.prefetch",
        ),
        ({"prefetch": "ftp://members.test/"}, "login.prefetch: expected an http:// or https://"),
        (
            {"prefetch": FORM, "csrf": {"css": "input[[", "field": "c"}},
            "jobs.j.login.csrf.css[0]: expected a CSS selector",
        ),
        ({"prefetch": FORM, "csrf": {"css": "i"}}, "csrf: exactly one of field or header"),
        ({"prefetch": FORM, "csrf": {"field": "c"}}, "csrf: exactly one of css or jmes"),
        (
            {"prefetch": FORM, "csrf": {"css": "i", "field": "c", "from": "x"}},
            "jobs.j.login.csrf.from: unknown key",
        ),
    ],
)
def test_a_bad_login_is_a_config_error_naming_its_key(
    change: dict[str, Any], expected: str
) -> None:
    assert expected in config_error({**LOGIN, **change})


def test_the_login_travels_with_the_job_and_fills_its_placeholders() -> None:
    config = config_from_dict({"jobs": {"j": {"login": LOGIN}}}, "m.yaml")
    job = config.jobs["j"]
    assert Job.from_wire(job.to_wire()) == job
    assert job.login is not None
    assert job.login.body("bob", "s3cret") == {
        "form": {"user": "bob", "password": "s3cret", "remember": "1"}
    }
    assert job.login.account_names() == ["account-0"]


def test_a_csrf_token_is_read_from_the_form_or_json_and_added_to_the_login() -> None:
    spec = build(LoginSpec, {**LOGIN, "prefetch": FORM, "csrf": {"css": "i", "field": "c"}})
    assert spec.body("bob", "pw", {"csrf": "t0k"})["form"]["csrf"] == "t0k"
    form = b'<form><input name=csrf type=hidden value="t0k"><input name=csrf value=""></form>'
    page = FetchOutcome(200, FORM, "text/html", "utf-8", form)
    assert csrf_token(CsrfRule(css="input[name=csrf]", field="csrf"), page) == "t0k"
    assert csrf_token(CsrfRule(css="input[name=other]", field="csrf"), page) == ""
    answer = FetchOutcome(200, FORM, "application/json", None, b'{"meta": {"csrf": "j5"}}')
    assert csrf_token(CsrfRule(jmes="meta.csrf", header="X-CSRF-Token"), answer) == "j5"
    assert csrf_token(CsrfRule(jmes="meta.csrf", header="X-CSRF-Token"), page) == ""


def test_secrets_come_from_the_environment_or_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = build(LoginSpec, {**LOGIN, "accounts": [{"user_env": "U", "password_file": "f"}]})
    reader = SecretReader()
    with pytest.raises(ConfigError, match="user_env: environment variable U is not set"):
        reader.credentials(spec.accounts[0])
    monkeypatch.setenv("U", "alice")
    secret = tmp_path / "pw"
    secret.write_text("s3cret\n")
    spec = build(
        LoginSpec, {**LOGIN, "accounts": [{"user_env": "U", "password_file": str(secret)}]}
    )
    assert reader.credentials(spec.accounts[0]) == ("alice", "s3cret")


def test_sessions_travel_in_bags_and_bag_done() -> None:
    note = SessionNote("account-0", 3, {"sid": "abc"}, "", 1.5)
    bag = Bag("l1", 1, "members.test", {}, [], [], [], 0.0, 1, 10.0, sessions=[note])
    assert decode(encode(bag)) == bag
    done = BagDone("w1", "l1", 1, sessions=[note], login_failures=1, login_error="why")
    assert decode(encode(done)) == done
    with pytest.raises(ValueError, match="may not hold ';'"):
        SessionNote("a", 1, {"sid": "a;b"})


def done(*notes: SessionNote, failures: int = 0) -> BagDone:
    return BagDone("w1", "l1", 1, sessions=list(notes), login_failures=failures, login_error="x")


SPEC = build(LoginSpec, {**LOGIN, "max_failures": 3, "pause": 60})


def test_a_newer_session_wins_and_a_stale_report_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    book = SessionBook(path)
    assert book.reported("j", "d", done(SessionNote("a", 2, {"sid": "new"})), SPEC, 0.0) == 0
    book.reported("j", "d", done(SessionNote("a", 1, {"sid": "old"}, rest=5.0)), SPEC, 0.0)
    [note] = book.for_bag("j", "d", 1.0)
    assert (note.cookies, note.version, note.rest) == ({"sid": "new"}, 2, 4.0)
    assert book.stale == 1
    assert path.stat().st_mode & 0o777 == 0o600
    again = SessionBook(path)  # a master restart keeps the login
    assert again.for_bag("j", "d", 0.0)[0].cookies == {"sid": "new"}
    assert "new" not in repr(book.status(0.0))


def test_failed_logins_rest_then_pause_the_domain_until_resumed() -> None:
    book = SessionBook()
    rests = [book.reported("j", "d", done(failures=1), SPEC, 10.0) for _ in range(2)]
    assert rests == [1.0, 2.0] and not book.paused("j", "d", 10.0)
    book.reported("j", "d", done(failures=1), SPEC, 10.0)
    assert book.paused("j", "d", 69.0) and not book.paused("j", "d", 70.5)
    status = book.status(10.0)["j/d"]
    assert status["state"] == "login_failed" and status["failures"] == 3
    assert book.failures == 3
    assert book.resume("j") == 1 and not book.paused("j", "d", 11.0)
