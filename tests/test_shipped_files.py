from pathlib import Path

import pytest

from nadird.config import load_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_example_configs_load(path: Path) -> None:
    load_config(path)


def test_readme_opens_with_the_two_setup_commands() -> None:
    text = (ROOT / "README.md").read_text()
    blocks = text.split("```")
    first, second = blocks[1], blocks[3]
    assert "nadird crawl" in first and "pip install" in first
    assert "pytest" in second and ".[test]" in second
    ci = (ROOT / ".ci" / "run").read_text()
    assert second.strip().splitlines()[-1].strip() in ci


@pytest.mark.skipif(
    __import__("shutil").which("systemd-analyze") is None, reason="systemd-analyze not installed"
)
def test_systemd_unit_verifies(tmp_path: Path) -> None:
    import shutil
    import subprocess

    nadird = shutil.which("nadird")
    assert nadird is not None
    unit = (ROOT / "systemd" / "nadird@.service").read_text()
    assert "Type=notify" in unit and "ExecReload=/bin/kill -HUP $MAINPID" in unit
    instance = tmp_path / "nadird@master.service"
    instance.write_text(unit.replace("/usr/local/bin/nadird", nadird))
    proc = subprocess.run(
        ["systemd-analyze", "verify", str(instance)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr


def test_grafana_dashboard_uses_only_metrics_the_master_exports() -> None:
    import json
    import re

    from nadird.master.metrics import COUNTERS

    dashboard = json.loads((ROOT / "configs" / "grafana" / "nadird.json").read_text())
    exported = {name + "_total" for name, _ in COUNTERS.values()} | {
        "nadird_errors_total",
        "nadird_http_status_total",
        "nadird_queue_urls",
        "nadird_leases",
        "nadird_store_pending",
        "nadird_seen_urls",
        "nadird_overflow_urls",
        "nadird_spool_records",
        "nadird_workers",
        "nadird_domain_queue_urls",
        "nadird_fetch_seconds_bucket",
        "nadird_lease_seconds_bucket",
    }
    metrics_py = (ROOT / "nadird" / "master" / "metrics.py").read_text()
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            for name in re.findall(r"nadird_[a-z_]+", target["expr"]):
                assert name in exported, (panel["title"], name)
                assert name.removesuffix("_total").removesuffix("_bucket") in metrics_py


def test_openapi_document_is_strict_yaml_and_documents_bad_bodies() -> None:
    from nadird.config.yaml_strict import load_strict

    doc = load_strict((ROOT / "nadird" / "master" / "openapi.yaml").read_text())
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            if method in ("post", "delete"):
                assert "400" in operation["responses"], (method, path)
    seeds = doc["paths"]["/api/seeds"]["post"]
    assert (
        "refused"
        in seeds["responses"]["200"]["content"]["application/json"]["schema"]["properties"]
    )
    assert (
        seeds["requestBody"]["content"]["application/json"]["schema"]["additionalProperties"]
        is False
    )
