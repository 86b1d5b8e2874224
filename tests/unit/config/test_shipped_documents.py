"""The files shipped with nadird: example configs, README, systemd unit, Grafana
dashboard and OpenAPI document."""

from pathlib import Path

import pytest
from support.shipped_files_helpers import ROOT, unit_settings

from nadird.config import load_config


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


def test_the_unit_does_not_restart_a_configuration_error_nor_a_superseded_master() -> None:
    from nadird.cli.main import EXIT_SUPERSEDED, EXIT_USAGE

    unit = unit_settings()
    assert unit["Restart"] == ["on-failure"]
    assert unit["RestartPreventExitStatus"] == [f"{EXIT_USAGE} {EXIT_SUPERSEDED}"]


def test_grafana_dashboard_uses_only_metrics_the_master_exports() -> None:
    import json
    import re

    from nadird.master.observe.metrics import COUNTERS

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
    metrics_py = (ROOT / "nadird" / "master" / "observe" / "metrics.py").read_text()
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            for name in re.findall(r"nadird_[a-z_]+", target["expr"]):
                assert name in exported, (panel["title"], name)
                assert name.removesuffix("_total").removesuffix("_bucket") in metrics_py


def test_openapi_document_is_strict_yaml_and_documents_bad_bodies() -> None:
    from nadird.config.yaml_strict import load_strict

    doc = load_strict((ROOT / "nadird" / "master" / "service" / "openapi.yaml").read_text())
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
