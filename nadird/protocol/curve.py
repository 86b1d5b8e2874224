"""CurveZMQ for the mesh: keys, the master's allow-list, and refusing to run
open on a non-loopback address.

The master is a CURVE server: its sockets need its secret key, and a ZAP
authenticator admits only worker public keys on the allow-list (reloadable:
a key taken off the list gets no further message through, because every
message carries the key it was authenticated with as its User-Id). Workers
are CURVE clients with their own keypair and the master's public key.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import zmq
import zmq.asyncio
import zmq.auth
from zmq.auth.asyncio import AsyncioAuthenticator

from nadird.common.errors import ConfigError
from nadird.common.logs import PerKeyLimit, get_logger
from nadird.config import Config, SecurityConfig
from nadird.protocol import local_keys
from nadird.protocol.local_keys import is_private_endpoint

log = get_logger()


def generate_keypair(directory: str | Path, name: str) -> tuple[Path, Path]:
    """Write NAME.key (public) and NAME.key_secret (secret, mode 0600)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    public, secret = zmq.auth.create_certificates(str(out), name)
    os.chmod(secret, 0o600)
    return Path(public), Path(secret)


def _load(path: str, want_secret: bool, key: str, source: str) -> tuple[bytes, bytes | None]:
    try:
        public, secret = zmq.auth.load_certificate(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(source, key, f"a readable CURVE key file ({exc})") from None
    if want_secret and secret is None:
        raise ConfigError(source, key, f"a secret key file (NAME.key_secret), got {path}")
    if want_secret:  # a public key is meant to be read by anyone
        warn_if_readable_by_others(path)
    return public, secret


def key_fingerprint(public_key: bytes | str) -> str:
    """A short name for a Z85 public key in logs: the first 16 hex digits of
    its SHA-256 (`nadird keygen` prints it for the keys it writes)."""
    key = public_key.encode() if isinstance(public_key, str) else public_key
    return hashlib.sha256(key.strip()).hexdigest()[:16]


def warn_if_readable_by_others(path: str | Path) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        log.warning("secret_file_readable_by_others", path=str(path), mode=oct(mode & 0o777))


def allowed_keys(sec: SecurityConfig, source: str) -> set[bytes]:
    """Z85 public keys of the workers allowed in: a directory of *.key files and/or a list."""
    keys = {k.encode() for k in sec.worker_keys}
    if sec.worker_keys_dir:
        directory = Path(sec.worker_keys_dir)
        if not directory.is_dir():
            raise ConfigError(source, "security.worker_keys_dir", f"a directory, got {directory}")
        for path in sorted(directory.glob("*.key")):
            keys.add(public_key(path))
    return keys


def public_key(path: str | Path) -> bytes:
    """The Z85 public key of a key file (NAME.key or NAME.key_secret)."""
    public, _ = zmq.auth.load_certificate(str(path))
    return public


@dataclass
class _AllowList:
    keys: set[bytes]
    _refusals: PerKeyLimit = field(default_factory=PerKeyLimit)

    def callback(self, domain: str, key: bytes) -> bool:
        """The ZAP check of a CURVE client's Z85 public key."""
        if key in self.keys:
            return True
        # A refused client retries its handshake over and over: one line a
        # second per key is enough to see who knocks.
        name = key_fingerprint(key)
        suppressed = self._refusals.allow(name, time.monotonic())
        if suppressed is not None:
            log.warning(
                "curve_client_refused",
                key=name,
                reason="public key not on the allow-list",
                suppressed=suppressed,
            )
        return False


class MasterSecurity:
    """Applies CURVE to the master's sockets and keeps the allow-list current."""

    def __init__(self, config: Config, source: str = "(config)") -> None:
        self.sec = config.security
        # Keys made in the state dir for a mesh on this host (local_keys.py).
        self.local = local_keys.for_master(config)
        self.enabled = bool(self.sec.master_secret_key) or self.local is not None
        self._allow = _AllowList(allowed_keys(self.sec, source) if self.enabled else set())
        self._auth: AsyncioAuthenticator | None = None
        self._public = self._secret = b""
        self._local_worker: set[bytes] = set()
        if self.sec.master_secret_key:
            public, secret = _load(
                self.sec.master_secret_key, True, "security.master_secret_key", source
            )
            self._public, self._secret = public, secret or b""
        elif self.local is None:
            check_open_binds(config, source)
        self._source = source

    def start(self, ctx: zmq.asyncio.Context) -> None:
        if not self.enabled:
            return
        if self.local is not None:
            self._use_local_keys(self.local)
        self._auth = AsyncioAuthenticator(ctx)
        self._auth.start()
        self._auth.configure_curve_callback(domain="*", credentials_provider=self._allow)
        local = str(self.local.directory) if self.local is not None else None
        log.info("curve_enabled", allowed_workers=len(self._allow.keys), local_keys=local)

    def _use_local_keys(self, local: local_keys.LocalKeys) -> None:
        """Made at start, not before: `nadird check` writes nothing."""
        local_keys.make(local, self._source)
        secret_file = str(local.path(local_keys.MASTER, secret=True))
        public, secret = _load(secret_file, True, "security.local_keys_dir", self._source)
        self._public, self._secret = public, secret or b""
        self._local_worker = {public_key(local.path(local_keys.WORKER))}
        self._allow.keys |= self._local_worker

    def secure(self, sock: zmq.asyncio.Socket) -> None:
        sock.setsockopt(zmq.MAXMSGSIZE, self.sec.max_message_bytes)
        if self.enabled:
            sock.curve_secretkey = self._secret
            sock.curve_publickey = self._public
            sock.curve_server = True

    def permits(self, user_id: str) -> bool:
        """Whether a message authenticated as `user_id` may still have effect."""
        return not self.enabled or user_id.encode() in self._allow.keys

    def reload(self, config: Config, source: str) -> None:
        if self.enabled:
            keys = allowed_keys(config.security, source) | self._local_worker
            revoked = len(self._allow.keys - keys)
            self._allow.keys = keys
            log.info("curve_allow_list_reloaded", allowed=len(keys), revoked=revoked)

    def stop(self) -> None:
        if self._auth is not None:
            self._auth.stop()


def secure_client(sock: zmq.asyncio.Socket, config: Config, source: str = "(config)") -> None:
    """A worker's socket: CURVE client when keys are configured."""
    sec = config.security
    sock.setsockopt(zmq.MAXMSGSIZE, sec.max_message_bytes)
    if not sec.worker_secret_key:
        return
    if not sec.master_public_key:
        raise ConfigError(source, "security.master_public_key", "the master's public key file")
    public, secret = _load(sec.worker_secret_key, True, "security.worker_secret_key", source)
    server, _ = _load(sec.master_public_key, False, "security.master_public_key", source)
    sock.curve_secretkey = secret or b""
    sock.curve_publickey = public
    sock.curve_serverkey = server


def check_open_binds(config: Config, source: str) -> None:
    endpoints: Iterable[tuple[str, str]] = (
        ("master.bind", config.master.bind),
        ("master.results_bind", config.master.results_bind),
    )
    for key, endpoint in endpoints:
        if is_private_endpoint(endpoint):
            # Only an operator's choice leaves a master on this host without
            # keys (local_keys.for_master): say what it trusts, at every start.
            log.warning(
                "insecure_mesh",
                endpoint=endpoint,
                reason="no CURVE keys: any local user's process can join as a worker, "
                "receive job rules and login sessions, and send results",
            )
            continue
        if not config.security.insecure:
            raise ConfigError(
                source,
                key,
                f"{endpoint} is reachable from other hosts: configure "
                "security.master_secret_key (nadird keygen) or set security.insecure: true",
            )
        log.warning(
            "insecure_mesh",
            endpoint=endpoint,
            reason="no CURVE keys: anyone who reaches this port can inject results",
        )


def check_config_secrets(config: Config, path: str) -> None:
    """Warn when a config file that holds a secret is readable by others."""
    try:
        password = urllib.parse.urlsplit(config.store.uri).password
    except ValueError:
        password = None
    if config.api.token or password:
        warn_if_readable_by_others(path)
