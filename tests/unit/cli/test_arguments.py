"""The command line's parser as a new user meets it: where options go, and what -h says."""

from __future__ import annotations

import argparse

import pytest

from nadird.cli.main import build_parser, parse_args

SEED = "http://a.test/"


def commands() -> dict[str, argparse.ArgumentParser]:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no commands")


@pytest.mark.parametrize(
    "argv",
    [
        ["--state-dir", "st", "dead-letters", "list"],
        ["--state-dir=st", "dead-letters", "list"],
        ["-c", "m.yaml", "--state-dir", "st", "--job", "j", "dead-letters", "list"],
        ["dead-letters", "--state-dir", "st", "list"],
    ],
)
def test_a_commands_options_may_come_before_the_command(argv: list[str]) -> None:
    args = parse_args(argv)
    assert args.command == "dead-letters" and args.action == "list" and args.state_dir == "st"


def test_an_option_value_that_names_a_command_is_still_a_value() -> None:
    args = parse_args(["--job", "status", "dead-letters", "list"])
    assert args.command == "dead-letters" and args.job == "status"


@pytest.mark.parametrize(
    ("option", "why"),
    [
        (["--role", "master"], "--role is not an option of crawl: `nadird --role master|worker"),
        (["--role=worker"], "--role is not an option of crawl"),
        (["--exit-when-done"], "--exit-when-done is not an option of crawl: it applies to"),
    ],
)
def test_a_daemon_option_after_a_command_is_named_not_taken_for_a_seed(
    option: list[str], why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_args(["crawl", *option, SEED])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert why in err and "no scheme" not in err


def test_keygen_help_does_not_offer_the_config_it_refuses() -> None:
    text = commands()["keygen"].format_help()
    assert "--config" not in text and "-c FILE" not in text
    assert "--out" in text


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_and_option_says_what_it_is(name: str) -> None:
    command = commands()[name]
    assert command.description, f"{name} -h has no description"
    for action in command._actions:
        assert action.help, f"{name}: {action.option_strings or action.dest} has no help"


def test_crawl_help_gives_every_default() -> None:
    """Every option with a default says it; the ones without a value of
    their own (the job's, else no limit) say that."""
    text = " ".join(commands()["crawl"].format_help().split())
    for option in ("--workers N", "--max-pages N", "--max-depth N", "--delay SECONDS"):
        assert option in text
        after = text.split(option, 2)[2]  # the usage line first, then the option's help
        assert "(default" in after.split(" --", 1)[0], option
    assert "--max-pages N stop after N pages (default: the job's max_pages, else no limit)" in text
