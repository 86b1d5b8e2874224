"""`nadird export` and `reextract` as processes, on a real SQLite store: a
mistyped store path is refused (never created empty), and a --job the store
has no page of is said so instead of printing nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.cli_helpers import nadird
from support.export_records import record

from nadird.store.sqlite.store import SqliteStore


def _filled(path: Path) -> Path:
    async def fill() -> None:
        store = SqliteStore(str(path))
        await store.open()
        await store.write([record(0), record(1)])  # job "news"
        await store.close()

    asyncio.run(fill())
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["export"],
        ["export", "--changes"],
        ["export", "--items"],
        ["reextract", "--job", "default", "-c", "rules.yaml"],
    ],
)
def test_a_store_file_that_is_not_there_is_refused_not_created(
    tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "rules.yaml").write_text("jobs: {default: {fields: {title: [{css: h1}]}}}\n")
    proc = nadird(*command, "--store", "sqlite:///crwal.db", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "nadird: error: (command line): --store: no file crwal.db "
        "(export and reextract read a store, never create one)"
    ]
    assert proc.stdout == ""
    assert not (tmp_path / "crwal.db").exists()


def test_the_config_store_uri_is_named_when_it_is_the_missing_one(tmp_path: Path) -> None:
    config = tmp_path / "m.yaml"
    config.write_text(f"store: {{uri: 'sqlite:///{tmp_path}/gone.db'}}\n")
    proc = nadird("export", "-c", str(config), "--changes", cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{config}: store.uri: no file {tmp_path}/gone.db" in proc.stderr
    assert not (tmp_path / "gone.db").exists()


@pytest.mark.parametrize(
    ("extra", "what"),
    [([], "records"), (["--changes"], "changes"), (["--items"], "keyed items")],
)
def test_a_job_the_store_has_no_page_of_is_named(
    tmp_path: Path, extra: list[str], what: str
) -> None:
    store = f"sqlite:///{_filled(tmp_path / 'crawl.db')}"
    proc = nadird("export", "--store", store, "--job", "nwes", *extra, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.strip() == f"exported 0 {what} (the store holds no page of job 'nwes')"
    # A job the store has pages of says nothing more, whatever it exported.
    right = nadird("export", "--store", store, "--job", "news", *extra, cwd=tmp_path)
    assert right.returncode == 0 and "holds no page" not in right.stderr
    assert right.stderr.startswith("exported ")


def test_since_takes_a_duration_ago_as_the_help_says(tmp_path: Path) -> None:
    store = f"sqlite:///{_filled(tmp_path / 'crawl.db')}"
    for since in ("6h ago", "6h", "2026-12-01T10:00:00Z", "1796119500"):
        proc = nadird("export", "--store", store, "--changes", "--since", since, cwd=tmp_path)
        assert proc.returncode == 0, (since, proc.stderr)
