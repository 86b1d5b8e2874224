"""The revisit-policy benchmark runs end to end on a small living web (a process)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import REPO

SCRIPT = REPO / "scripts" / "bench_freshness.py"


@pytest.mark.slow
def test_a_small_run_spends_the_budget_and_reports_no_false_change() -> None:
    # One domain of 50 pages, a slot every 72 s: 100 slots in two virtual hours.
    args = ["--pages", "50", "--virtual", "7200", "--warmup", "0", "--policies"]
    args.append("fixed,adaptive,adaptive-mle,oracle")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    results = {r["policy"]: r for r in summary["results"]}
    assert set(results) == {"fixed", "adaptive", "adaptive-mle", "oracle"}
    fixed = results["fixed"]
    assert fixed["requests"] == 100  # every page twice, every slot used
    assert fixed["unchanged_good"] > 0 and fixed["share_304_good"] == 1.0
    assert fixed["bytes_ratio_good"] == 0.0  # a 304 has no body
    for result in results.values():
        assert result["false"] == 0, result["policy"]  # the signature ignores the noise
        assert 0 < result["requests"] <= 100
        assert 0.0 < result["freshness"] <= 1.0
        assert result["detected"] > 0
        # Every check that got a new version reported it: what was missed, no check saw.
        assert result["undetected"] == 0, result["policy"]
    assert 0 < summary["reference"]["uniform"] < summary["reference"]["optimal"] <= 1.0


@pytest.mark.slow
def test_bad_arguments_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--policies", "fixed,nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "policies" in done.stderr
