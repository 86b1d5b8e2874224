"""A worker without CURVE keys facing a CURVE master: both sides say what is
wrong, and the worker still stops at once on SIGTERM."""

from __future__ import annotations

import signal
import socket
import time
from pathlib import Path

from nadird.master.service.handshakes import HANGUP
from nadird.protocol.curve import generate_keypair
from nadird.testing.cluster import Cluster, wait_until


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_keyless_worker_and_a_curve_master_both_say_why(cluster: Cluster, tmp_path: Path) -> None:
    _public, secret = generate_keypair(tmp_path / "master", "master")
    other_master, _ = generate_keypair(tmp_path / "other", "other")
    _, worker_secret = generate_keypair(tmp_path / "w2", "w2")
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    control = f"tcp://127.0.0.1:{free_port()}"
    config = cluster.master_config(
        master={"bind": control, "exit_when_done": False},
        security={"master_secret_key": str(secret), "worker_keys_dir": str(allowed)},
    )
    master = cluster.start("master", "master", config)
    assert wait_until(lambda: any(e.get("event") == "master_started" for e in master.logs()), 30)
    worker_config = cluster.worker_config(1)
    worker_config["worker"].update(master=control, unreachable_after=1.0)
    worker = cluster.start("worker", "w1", worker_config)
    # Another worker has keys, but another master's public key.
    wrong_config = cluster.worker_config(2)
    wrong_config["worker"].update(master=control, unreachable_after=1.0)
    wrong_config["security"] = {
        "worker_secret_key": str(worker_secret),
        "master_public_key": str(other_master),
    }
    wrong = cluster.start("worker", "w2", wrong_config)

    def logged(proc_name: str, event: str) -> list[dict[str, object]]:
        return [e for e in cluster.proc(proc_name).logs() if e.get("event") == event]

    assert wait_until(lambda: logged("w1", "master_unreachable"), 30)
    assert wait_until(lambda: logged("master", "curve_handshake_failed"), 10)
    unreachable = logged("w1", "master_unreachable")[0]
    assert "CURVE" in str(unreachable.get("hint")), unreachable
    assert "security.master_public_key" in str(unreachable.get("hint"))
    failed = [e for e in logged("master", "curve_handshake_failed") if e["socket"] == "control"]
    assert failed[0]["endpoint"] == control
    assert wait_until(lambda: logged("w2", "master_unreachable"), 30)
    assert "may not fit" in str(logged("w2", "master_unreachable")[0].get("hint"))
    reasons = {str(e["reason"]) for e in logged("master", "curve_handshake_failed")}
    assert any(r.startswith("cryptographic error") for r in reasons), reasons
    # The keyless worker: the master reads its greeting, or (when the worker
    # saw the mismatch first and hung up) only the hang-up.
    assert HANGUP in reasons or any(r.startswith("security mechanism") for r in reasons)
    time.sleep(2.0)  # the worker keeps knocking: the master's lines stay few
    assert len(logged("master", "curve_handshake_failed")) <= 6  # once per socket and reason
    wrong.kill(signal.SIGTERM)
    assert cluster.wait(wrong, 30) == 0

    asked = time.monotonic()
    worker.kill(signal.SIGTERM)
    assert cluster.wait(worker, 30) == 0
    assert time.monotonic() - asked < 3.0
    assert "Unclosed" not in worker.log_path.read_text()
    master.kill(signal.SIGTERM)
    assert cluster.wait(master, 30) == 0
