"""An sftp:// replica (a real SFTP server on loopback, asyncssh): the master
replicates with the key master.replica_sftp_key names, and `nadird restore
-c` brings the state back with it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from support.sftp_server import sftp_server

from nadird.testing import forkserver
from nadird.testing.checks import expected_set, start_crawl
from nadird.testing.cluster import Cluster
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def test_a_master_replicates_over_sftp_with_its_key_and_restore_fetches_it_back(
    cluster: Cluster, tmp_path: Path
) -> None:
    graph = SiteGraph(hosts=2, pages=30)
    with sftp_server(tmp_path) as server, run_in_thread(graph, latency=0.001):
        replica = f"sftp://nadird@127.0.0.1:{server.port}/backups/nadird"
        master = {
            "replica": replica,
            "replica_sftp_key": str(server.client_key),
            "replica_sync_interval": 0.1,
        }
        first = start_crawl(cluster, graph, master=master)
        assert cluster.wait(first, 90) == 0
        assert (server.root / "backups" / "nadird" / "frontier.db" / "ltx").is_dir()

        # Restored on another host: the same file with another state directory.
        config = yaml.safe_load((cluster.workdir / "master.yaml").read_text())
        config["master"]["state_dir"] = str(tmp_path / "restored")
        elsewhere = tmp_path / "restored.yaml"
        elsewhere.write_text(yaml.safe_dump(config))
        done = forkserver.run(
            [sys.executable, "-m", "nadird", "restore", "-c", str(elsewhere)], timeout=120
        )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {"frontier.db", "robots.db"} <= set(report["restored"])
    assert report["crawl"]["known"] == len(expected_set(graph))
    assert report["crawl"]["queued"] == 0 and report["generation"]["n"] == 1
    assert report["positions"]["frontier.db"]["txid"] > 1
