"""The command line as a new user types it: option order, shared options, bad values.

Parsing is pure logic (parse_args); what the process does with a bad value
(exit status, the one line on stderr, nothing run) is checked on the real
`python -m nadird`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO
from support.cli_helpers import nadird
from support.cli_parse_helpers import SEED_A

# ------------------------------------------------------------ option order


# ---------------------------------------------------------- shared options


@pytest.mark.slow
def test_refusals_are_one_line_naming_the_option(tmp_path: Path) -> None:
    proc = nadird("-c", "x.yaml", "keygen", "--out", str(tmp_path / "k"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == "nadird: error: keygen takes no --config (see nadird -h)"
    assert not (tmp_path / "k").exists()


@pytest.mark.slow
def test_dead_letters_reads_the_state_dir_of_the_config_given_before_the_command(
    tmp_path: Path,
) -> None:
    """`nadird -c master.yaml dead-letters list` used to read ./nadird-state."""
    config = tmp_path / "master.yaml"
    config.write_text(f"master:\n  state_dir: {tmp_path / 'elsewhere'}\n")
    for argv in (
        ["-c", str(config), "dead-letters", "list"],
        ["dead-letters", "list", "-c", str(config)],
    ):
        proc = nadird(*argv, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert f"{tmp_path / 'elsewhere' / 'frontier.db'}: (file)" in proc.stderr


# -------------------------------------------------------------- bad values


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--max-depth", "-1"], "argument --max-depth: must be >= 0, got -1"),
        (["--retries", "-5"], "argument --retries: must be >= 0, got -5"),
        (["--workers", "0"], "argument --workers: must be >= 1, got 0"),
        (["--delay", "nan"], "argument --delay: expected a finite number, got 'nan'"),
        (["--delay", "-1"], "argument --delay: expected a finite number >= 0, got '-1'"),
        (["--max-pages", "ten"], "argument --max-pages: expected a whole number, got 'ten'"),
        (["--out", "x.txt"], "argument --out: cannot tell the format of 'x.txt'"),
        (["example.com/a"], "'example.com/a' has no scheme (did you mean http://example.com/a"),
        (["ftp://a.test/f"], "only http:// and https:// URLs can be crawled"),
        (["http://a.test:99999/"], "Port out of range"),
        (["--resolve", "a.test"], "expected HOST=IP"),
    ],
)
def test_bad_values_exit_2_with_one_line_and_run_nothing(
    tmp_path: Path, args: list[str], says: str
) -> None:
    proc = nadird("crawl", SEED_A, *args, "--store", f"sqlite:///{tmp_path}/c.db", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("nadird crawl: error: ") and says in lines[0], lines[0]
    assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == []  # no store, no state: nothing ran


@pytest.mark.slow
def test_a_bad_seed_in_the_seed_file_names_the_file_and_line(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"# shop\n{SEED_A}\n\nwww.example.com\n")
    proc = nadird("crawl", "--seeds", str(seeds), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"nadird: error: {seeds}: line 4: a crawlable URL ('www.")


@pytest.mark.slow
def test_a_bad_seed_in_the_base_config_names_the_key(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text("seeds: ['http://a.test/', 'mailto:x@a.test']\n")
    proc = nadird("crawl", "-c", str(base), cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{base}: seeds[1]: a crawlable URL" in proc.stderr


@pytest.mark.slow
def test_out_in_a_missing_directory_is_refused_before_crawling(tmp_path: Path) -> None:
    proc = nadird("crawl", SEED_A, "--out", str(tmp_path / "no" / "pages.jsonl"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "--out: a file in an existing directory" in proc.stderr


@pytest.mark.slow
def test_crawl_help_shows_the_defaults() -> None:
    proc = nadird("crawl", "-h")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())  # help wraps lines anywhere
    assert "--workers N worker processes (default: 2)" in text
    assert "--store URI store URI (default: store.uri of --config if it names one, else" in text
    assert "(default: the job's, else 1.0)" in text  # --delay
    assert "(default: None)" not in text


# ------------------------------------------------------------------- check


@pytest.mark.slow
def test_check_accepts_a_valid_config_of_either_role(tmp_path: Path) -> None:
    root = REPO
    worker = root / "configs" / "worker.yaml"
    proc = nadird("check", "-c", str(worker))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{worker}: ok (1 jobs, 0 seeds, node worker-1)\n"
    master = tmp_path / "master.yaml"
    master.write_text("node: m\nmaster:\n  bind: tcp://127.0.0.1:5550\nseeds: [http://a.test/]\n")
    proc = nadird("check", "-c", str(master))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{master}: ok (1 jobs, 1 seeds, node m)\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("fetch:\n  pool_sise: 3\n", "fetch.pool_sise: unknown key"),
        ("master:\n  bind: tcp://0.0.0.0:5550\n", "master.bind: tcp://0.0.0.0:5550 is reachable"),
        ("security:\n  worker_secret_key: /nonexistent.key_secret\n", "security.master_public_key"),
        ("store:\n  uri: postgres://db/x\n", "store.uri: unsupported store URI"),
        ("jobs:\n  a:\n    fields: {t: [{css: 'p', xpath: '//p'}]}\n", "jobs.a"),
    ],
)
def test_check_refuses_what_a_role_would_refuse_at_start(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    proc = nadird("check", "-c", str(path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"nadird: error: {path}: ") and says in proc.stderr


# -------------------------------------------------------------- broken pipe


def _store_with_records(path: Path, count: int) -> None:
    import asyncio

    from nadird.common.urls import fingerprint
    from nadird.store.base import PageRecord
    from nadird.store.sqlite.store import SqliteStore

    async def write() -> None:
        store = SqliteStore(str(path))
        await store.open()
        urls = [f"http://a.test/{i}" for i in range(count)]
        records = [
            PageRecord(
                fp=fingerprint(u),
                url=u,
                final_url=u,
                status=200,
                fetched_at=1.0,
                job="default",
                depth=1,
            )
            for u in urls
        ]
        await store.write(records)
        await store.close()

    asyncio.run(write())


@pytest.mark.slow
def test_a_closed_stdout_ends_quietly(tmp_path: Path) -> None:
    """`nadird export ... | head`: no BrokenPipeError traceback, status 141."""
    config = tmp_path / "w.yaml"
    config.write_text("node: w\n")
    store = tmp_path / "s.db"
    _store_with_records(store, 2000)
    for argv in (
        ["keygen", "--out", str(tmp_path / "keys")],
        ["check", "-c", str(config)],
        ["export", "--store", f"sqlite:///{store}"],
    ):
        proc = subprocess.Popen(
            [sys.executable, "-m", "nadird", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the first write
        stderr = proc.stderr.read().decode()
        assert proc.wait(60) == 141, stderr
        assert "Traceback" not in stderr and "Error" not in stderr, stderr
