"""CURVE keys without a running mesh: which key files are warned about, how a
refused client is logged, the per-key rate limit of those lines."""

from __future__ import annotations

import os
from pathlib import Path

import zmq
import zmq.auth
from structlog.testing import capture_logs

from nadird.common.logs import PerKeyLimit
from nadird.config import Config, SecurityConfig
from nadird.protocol.curve import (
    MasterSecurity,
    generate_keypair,
    key_fingerprint,
    public_key,
    secure_client,
)


def test_only_a_secret_key_readable_by_others_is_warned_about(tmp_path: Path) -> None:
    master_public, _ = generate_keypair(tmp_path / "m", "master")
    worker_public, worker_secret = generate_keypair(tmp_path / "w", "w1")
    for public in (master_public, worker_public):
        os.chmod(public, 0o644)  # public keys are meant to be copied around
    config = Config(
        security=SecurityConfig(
            worker_secret_key=str(worker_secret), master_public_key=str(master_public)
        )
    )
    ctx = zmq.Context()
    try:
        sock = ctx.socket(zmq.PUSH)
        with capture_logs() as quiet:
            secure_client(sock, config)
        os.chmod(worker_secret, 0o640)
        with capture_logs() as warned:
            secure_client(sock, config)
        sock.close(linger=0)
    finally:
        ctx.term()
    assert [e for e in quiet if e["event"] == "secret_file_readable_by_others"] == []
    [warning] = [e for e in warned if e["event"] == "secret_file_readable_by_others"]
    assert warning["path"] == str(worker_secret)


def test_a_refused_client_is_logged_by_fingerprint_at_most_once_a_second(tmp_path: Path) -> None:
    _, master_secret = generate_keypair(tmp_path / "m", "master")
    allowed, _ = generate_keypair(tmp_path / "w", "w1")
    stranger, stranger_secret = generate_keypair(tmp_path / "x", "x1")
    config = Config(
        security=SecurityConfig(
            master_secret_key=str(master_secret), worker_keys=[public_key(allowed).decode()]
        )
    )
    zap = MasterSecurity(config)._allow
    with capture_logs() as events:
        assert zap.callback("*", public_key(allowed))
        assert not any(zap.callback("*", public_key(stranger)) for _ in range(50))
    [refused] = [e for e in events if e["event"] == "curve_client_refused"]
    assert refused["key"] == key_fingerprint(public_key(stranger))
    assert len(refused["key"]) == 16
    _, secret = zmq.auth.load_certificate(str(stranger_secret))
    assert secret is not None and secret.decode() not in repr(refused)


def test_the_per_key_limit_counts_what_it_held_back() -> None:
    limit = PerKeyLimit(interval=1.0, max_keys=3)
    assert limit.allow("a", 10.0) == 0
    assert limit.allow("a", 10.5) is None
    assert limit.allow("a", 10.9) is None
    assert limit.allow("b", 10.9) == 0  # keys are independent
    assert limit.allow("a", 11.0) == 2
    for key in ("c", "d", "e"):  # over max_keys: forgets, stays bounded
        limit.allow(key, 11.0)
    assert len(limit._last) <= 3
