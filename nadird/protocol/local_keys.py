"""CURVE keys for a mesh on this host only, made by the master at start.

A master bound to loopback or ipc:// only, with no CURVE keys configured,
must still tell its own workers from a process of another local user: any
local process can reach a loopback port, and a bag carries the job's rules
and its login sessions (cookies). So at start the master makes two key pairs
in `security.local_keys_dir` (default `master.state_dir/keys`), as it makes
the API token: its own and one its local workers share, the directory mode
0700 and the secret files 0600. A worker with no keys configured whose
master is on loopback or ipc:// reads the worker pair and the master's
public key there: only the user the master runs as (and root) can, so only
their processes get in.

`security.allow_insecure_loopback: true`, on the master and on its workers,
keeps the mesh open instead (see docs/cluster/curve.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.asyncio
import zmq.auth

from nadird.common.errors import ConfigError
from nadird.common.logs import get_logger
from nadird.config import Config, SecurityConfig

log = get_logger()
MASTER = "master"
WORKER = "worker"
POLL = 0.5  # seconds between a waiting worker's looks at the directory


@dataclass(frozen=True)
class LocalKeys:
    """The key files of a local mesh, all in one directory."""

    directory: Path

    def path(self, name: str, secret: bool = False) -> Path:
        return self.directory / (f"{name}.key_secret" if secret else f"{name}.key")

    def files(self) -> list[Path]:
        return [self.path(n, s) for n in (MASTER, WORKER) for s in (False, True)]


def keys_dir(config: Config) -> Path:
    return Path(config.security.local_keys_dir or Path(config.master.state_dir) / "keys")


def is_private_endpoint(endpoint: str) -> bool:
    """ipc://, inproc:// and tcp:// on loopback are reachable from this host only."""
    scheme, _, rest = endpoint.partition("://")
    if scheme in ("ipc", "inproc"):
        return True
    if scheme != "tcp":
        return False
    host = rest.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # "*", an interface name or a host name: may be reachable


def open_allowed(sec: SecurityConfig) -> bool:
    """Whether the operator chose a mesh without keys."""
    return sec.insecure or sec.allow_insecure_loopback


def for_master(config: Config) -> LocalKeys | None:
    """The local keys a master uses: when no keys are configured, it binds
    on this host only and the operator did not choose an open mesh."""
    sec = config.security
    binds = (config.master.bind, config.master.results_bind)
    if sec.master_secret_key or open_allowed(sec):
        return None
    if not all(is_private_endpoint(endpoint) for endpoint in binds):
        return None  # reachable from other hosts: configured keys or refused (curve.py)
    return LocalKeys(keys_dir(config))


def for_worker(config: Config) -> LocalKeys | None:
    """The local keys a worker reads: when no keys are configured and its
    master is on this host."""
    sec = config.security
    ends = [end for pair in config.worker.endpoints() for end in pair]
    if sec.worker_secret_key or open_allowed(sec):
        return None
    if not all(is_private_endpoint(endpoint) for endpoint in ends):
        return None
    return LocalKeys(keys_dir(config))


def make(keys: LocalKeys, source: str) -> None:
    """Write the key pairs unless they are there: in a fresh directory
    renamed into place, so a worker never reads half a file."""
    present = [path.exists() for path in keys.files()]
    if all(present):
        return
    if keys.directory.exists():
        raise ConfigError(
            source,
            "security.local_keys_dir",
            f"{keys.directory} with all four key files (some are missing: "
            "remove it and the master makes new ones)",
        )
    keys.directory.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=".keys-", dir=keys.directory.parent))  # mode 0700
    for name in (MASTER, WORKER):
        _public, secret = zmq.auth.create_certificates(str(fresh), name)
        os.chmod(secret, 0o600)
    os.rename(fresh, keys.directory)
    log.info("local_keys_created", path=str(keys.directory))


def unreadable(keys: LocalKeys) -> str | None:
    """Why a worker cannot use the keys (None: it can)."""
    try:
        _, secret = zmq.auth.load_certificate(str(keys.path(WORKER, secret=True)))
        zmq.auth.load_certificate(str(keys.path(MASTER)))
    except (OSError, ValueError) as exc:
        return str(exc)
    return None if secret else "no secret key in the worker's key file"


async def secure_local(
    config: Config, socks: tuple[zmq.asyncio.Socket, ...], stop: asyncio.Event
) -> bool:
    """A local worker's sockets as CURVE clients with the master's local
    keys, once it can read them (the master makes them when it starts).
    False if `stop` was set first."""
    keys = for_worker(config)
    if keys is None:
        return True
    logged = False
    while (why := unreadable(keys)) is not None:
        if not logged:
            log.warning(
                "local_keys_waiting", path=str(keys.directory), reason=why,
                hint="start the master, run as its user, or set security.local_keys_dir "
                "to its state_dir/keys",
            )  # fmt: skip
            logged = True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), POLL)
        if stop.is_set():
            return False
    public, secret = zmq.auth.load_certificate(str(keys.path(WORKER, secret=True)))
    server, _ = zmq.auth.load_certificate(str(keys.path(MASTER)))
    for sock in socks:
        sock.curve_secretkey = secret or b""
        sock.curve_publickey = public
        sock.curve_serverkey = server
    log.info("local_keys_used", path=str(keys.directory))
    return True
