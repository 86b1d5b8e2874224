"""Which meshes get keys made by the master, where they go, who reads them."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
import zmq
import zmq.asyncio

from nadird.common.errors import ConfigError
from nadird.config import Config, MasterConfig, SecurityConfig, WorkerConfig
from nadird.protocol import local_keys
from nadird.protocol.curve import MasterSecurity


def config(state: Path, **security: object) -> Config:
    return Config(
        master=MasterConfig(state_dir=str(state)),
        security=SecurityConfig(**security),  # type: ignore[arg-type]
    )


def test_a_master_on_this_host_without_keys_gets_local_ones(tmp_path: Path) -> None:
    local = local_keys.for_master(config(tmp_path))
    assert local is not None and local.directory == tmp_path / "keys"
    assert local_keys.for_master(config(tmp_path, allow_insecure_loopback=True)) is None
    assert local_keys.for_master(config(tmp_path, insecure=True)) is None
    assert local_keys.for_master(config(tmp_path, master_secret_key="k")) is None
    placed = config(tmp_path, local_keys_dir=str(tmp_path / "elsewhere"))
    assert local_keys.for_master(placed) == local_keys.LocalKeys(tmp_path / "elsewhere")


def test_a_worker_reads_them_only_for_a_master_on_this_host(tmp_path: Path) -> None:
    assert local_keys.for_worker(config(tmp_path)) is not None  # tcp://127.0.0.1
    remote = Config(worker=WorkerConfig(master="tcp://10.0.0.1:5550", results="ipc:///x"))
    assert local_keys.for_worker(remote) is None
    assert local_keys.for_worker(config(tmp_path, worker_secret_key="k")) is None
    assert local_keys.for_worker(config(tmp_path, allow_insecure_loopback=True)) is None


def test_keys_are_made_once_private_and_not_by_a_check(tmp_path: Path) -> None:
    security = MasterSecurity(config(tmp_path))
    assert security.enabled and not (tmp_path / "keys").exists()  # `nadird check` writes nothing
    keys = local_keys.LocalKeys(tmp_path / "keys")
    local_keys.make(keys, "(test)")
    before = [path.read_bytes() for path in keys.files()]
    local_keys.make(keys, "(test)")  # a restart keeps them
    assert [path.read_bytes() for path in keys.files()] == before
    assert stat.S_IMODE(os.stat(keys.directory).st_mode) == 0o700
    for name in (local_keys.MASTER, local_keys.WORKER):
        assert stat.S_IMODE(os.stat(keys.path(name, secret=True)).st_mode) == 0o600
    assert local_keys.unreadable(keys) is None
    keys.path(local_keys.WORKER, secret=True).unlink()
    with pytest.raises(ConfigError, match="local_keys_dir"):
        local_keys.make(keys, "(test)")


async def test_a_worker_waits_for_the_keys_until_stopped(tmp_path: Path) -> None:
    ctx = zmq.asyncio.Context()
    sock = ctx.socket(zmq.DEALER)
    stop = asyncio.Event()
    try:
        waiting = asyncio.create_task(local_keys.secure_local(config(tmp_path), (sock,), stop))
        await asyncio.sleep(0.1)
        assert not waiting.done()
        local_keys.make(local_keys.LocalKeys(tmp_path / "keys"), "(test)")
        assert await asyncio.wait_for(waiting, 5) is True
        assert sock.getsockopt(zmq.MECHANISM) == zmq.CURVE
        stop.set()
        assert await local_keys.secure_local(config(tmp_path / "none"), (sock,), stop) is False
    finally:
        sock.close(linger=0)
        ctx.term()
