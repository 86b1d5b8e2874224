"""The command line as a new user types it: option order and shared options,
parsed by parse_args."""

from __future__ import annotations

import pytest
from support.cli_parse_helpers import SEED_A, SEED_B

from nadird.cli.main import parse_args


@pytest.mark.parametrize(
    "argv",
    [
        ["crawl", SEED_A, "--resolve", "a.test=127.0.0.1", SEED_B, "--allow-private"],
        ["crawl", "--resolve", "a.test=127.0.0.1", SEED_A, "--allow-private", SEED_B],
        ["crawl", "--allow-private", SEED_A, SEED_B, "--resolve", "a.test=127.0.0.1"],
        ["crawl", SEED_A, "--resolve=a.test=127.0.0.1", "--allow-private", SEED_B],
    ],
)
def test_seed_urls_and_options_mix_in_any_order(argv: list[str]) -> None:
    args = parse_args(argv)
    assert args.seed_urls == [SEED_A, SEED_B]
    assert args.resolve == [("a.test", "127.0.0.1")]
    assert args.allow_private is True


def test_every_option_kind_between_seeds() -> None:
    args = parse_args(
        [
            "crawl",
            SEED_A,
            "--workers",  # a typed value
            "3",
            "--allow-domain",  # repeated (append)
            "a.test",
            "http://c.test/",
            "--allow-domain",
            "b.test",
            "--resolve",  # repeated, typed (HOST=IP)
            "a.test=127.0.0.1",
            "--render",  # a flag
            "--resolve",
            "*.test=127.0.0.2",
            SEED_B,
            "--delay",  # a float
            "0.5",
            "-c",  # the shared option, short form
            "base.yaml",
            "--log-level",  # a choice
            "warning",
        ]
    )
    assert args.seed_urls == [SEED_A, "http://c.test/", SEED_B]
    assert args.workers == 3 and args.delay == 0.5 and args.render is True
    assert args.allow_domain == ["a.test", "b.test"]
    assert args.resolve == [("a.test", "127.0.0.1"), ("*.test", "127.0.0.2")]
    assert args.config == "base.yaml" and args.log_level == "warning"


def test_submit_urls_mix_with_options_too() -> None:
    args = parse_args(["submit", SEED_A, "--job", "shop", SEED_B, "-c", "m.yaml"])
    assert args.words == [SEED_A, SEED_B] and args.job == "shop" and args.config == "m.yaml"


@pytest.mark.parametrize(
    "command", [["dead-letters", "list"], ["export"], ["status"], ["crawl", SEED_A], ["check"]]
)
@pytest.mark.parametrize("where", ["before", "after"])
def test_config_and_log_level_mean_the_same_before_and_after_the_command(
    command: list[str], where: str
) -> None:
    shared = ["-c", "master.yaml", "--log-level", "debug"]
    argv = [*shared, *command] if where == "before" else [*command, *shared]
    args = parse_args(argv)
    assert args.config == "master.yaml"
    assert args.log_level == "debug"


def test_without_shared_options_they_are_none() -> None:
    args = parse_args(["status"])
    assert args.config is None and args.log_level is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-c", "x.yaml", "keygen", "--out", "k"], "keygen takes no --config"),
        (["--exit-when-done", "status"], "--exit-when-done applies to --role master only"),
        (["--role", "worker", "--rebuild-seen", "-c", "w.yaml"], "--rebuild-seen applies"),
        (["--role", "master", "-c", "m.yaml", "crawl", SEED_A], "--role runs a daemon"),
        (["check"], "check needs -c FILE"),
    ],
)
def test_an_option_that_does_not_apply_is_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
