"""The revisit keys of a job, as the config loader reads them."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cli_helpers import nadird as _nadird

BAD_REVISITS = [
    ("revisit: {cron: '61 * * * *'}", "revisit.cron: expected a cron expression"),
    (
        "revisit: {cron: '0 9 * * *', timezone: Mars/Olympus}",
        "revisit.timezone: expected an IANA time zone like Asia/Shanghai, got 'Mars/Olympus'",
    ),
    ("revisit: {every: soon}", "revisit.every: expected a duration like 90s"),
    ("revisit: {adaptive: {min: 5m, max: never}}", "revisit.adaptive.max: expected a duration"),
    ("expire: 30 days", "expire: expected a duration like 90s, 5m, 6h, 14d or 1h30m"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("line", "says"), BAD_REVISITS)
def test_check_and_both_roles_exit_2_naming_the_revisit_key(
    tmp_path: Path, line: str, says: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(f"jobs:\n  shop:\n    {line}\n")
    for args in (["check", "-c", str(path)], ["--role", "master", "-c", str(path)]):
        proc = _nadird(*args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith(f"nadird: error: {path}: jobs.shop.{says}"), proc.stderr
    assert list(tmp_path.iterdir()) == [path]  # no state directory: nothing started


@pytest.mark.slow
def test_crawl_exits_2_on_a_bad_revisit_in_its_config_or_option(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text("jobs:\n  default:\n    revisit: {cron: '0 9 * * *', timezone: Mars}\n")
    proc = _nadird("crawl", "http://a.test/", "-c", str(base), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{base}: jobs.default.revisit.timezone: expected an IANA time zone" in proc.stderr
    proc = _nadird("crawl", "http://a.test/", "--revisit", "soon", cwd=tmp_path)
    assert proc.returncode == 2
    assert "argument --revisit: expected a duration like 90s" in proc.stderr
    assert list(tmp_path.iterdir()) == [base]  # no store, no state: nothing ran
