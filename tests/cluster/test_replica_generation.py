"""No two masters on one replica: a master restored from the replica takes
the next generation, and the old master revived on the state it left
refuses to start (exit 3, saying why and how to come back) instead of
handing out the same work a second time."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from nadird.testing import forkserver
from nadird.testing.checks import last_event, start_crawl
from nadird.testing.cluster import Cluster
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def restore(config: Path, *extra: str) -> dict[str, Any]:
    done = forkserver.run(
        [sys.executable, "-m", "nadird", "restore", "-c", str(config), *extra], timeout=120
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = yaml.safe_load(done.stdout)
    return report


def on_state(cluster: Cluster, state: Path, name: str) -> Path:
    """The master's file with another state directory (another host's disk)."""
    config = yaml.safe_load((cluster.workdir / "master.yaml").read_text())
    config["master"]["state_dir"] = str(state)
    path = cluster.workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_the_old_master_revived_after_a_restore_elsewhere_refuses_to_start(
    cluster: Cluster, tmp_path: Path
) -> None:
    graph = SiteGraph(hosts=2, pages=30)
    old_state = cluster.workdir / "state"
    master = {"replica": (tmp_path / "replica").as_uri(), "replica_sync_interval": 0.1}
    with run_in_thread(graph, latency=0.001):
        first = start_crawl(cluster, graph, master=master)
        assert cluster.wait(first, 90) == 0
    assert last_event(cluster, "master", "replica_generation")["generation"] == 1

    # Restored on "another host", which starts a master from it.
    elsewhere = on_state(cluster, cluster.workdir / "state-b", "master-b")
    assert restore(elsewhere)["generation"]["n"] == 1
    restored = cluster.start_again("master-b", elsewhere)
    assert cluster.wait(restored, 60) == 0
    taken = last_event(cluster, "master-b", "replica_generation")
    assert (taken["generation"], taken["replica"]) == (2, 1)

    # The old machine comes back: its state is generation 1, the replica's 2.
    revived = cluster.start_again("master", cluster.workdir / "master.yaml")
    assert cluster.wait(revived, 60) == 3  # superseded: not restarted
    said = revived.log_path.read_text().splitlines()[-1]
    assert said.startswith("nadird: error: ") and "generation 1" in said
    assert "generation 2" in said and "nadird restore --force" in said
    assert "master_started" not in {e.get("event") for e in revived.logs()[-5:]}

    # The way back it names: restore over the old state, then start.
    assert restore(cluster.workdir / "master.yaml", "--force")["generation"]["n"] == 2
    again = cluster.start_again("master", cluster.workdir / "master.yaml")
    assert cluster.wait(again, 60) == 0
    assert last_event(cluster, "master", "replica_generation")["generation"] == 3
    assert old_state.is_dir()
