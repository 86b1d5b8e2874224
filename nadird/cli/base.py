"""The parser classes of the command line, and the options every command shares.

Kept apart from cli.py (which declares the commands) so that the rules of
parsing live in one small place: one-line errors, positionals among the
options, `-c/--config` and `--log-level` given before or after the command.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from nadird.common.logs import FORMATS

EXIT_USAGE = 2
LOG_LEVELS = ["debug", "info", "warning", "error"]


class Parser(argparse.ArgumentParser):
    """Errors are one line on stderr (and exit status 2), not the usage text."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} -h)\n")


# The options of `nadird --role ...`, which runs a daemon and takes no command.
DAEMON_OPTIONS = {
    "--role": "`nadird --role master|worker -c FILE` runs a daemon and takes no command",
    "--exit-when-done": "it applies to `nadird --role master`",
    "--rebuild-seen": "it applies to `nadird --role master`",
}


class CommandParser(Parser):
    """A command's parser: positionals may sit among the options, as in
    `nadird crawl URL1 --resolve H=IP URL2 --allow-private`."""

    _intermixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # parse_known_intermixed_args calls parse_known_args for its two passes.
        if self._intermixing:
            return super().parse_known_args(args, namespace)
        self._refuse_daemon_options(args or [])
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False

    def _refuse_daemon_options(self, args: list[str]) -> None:
        """`nadird crawl --role master URL` would otherwise take `master` for a
        seed URL and say it has no scheme."""
        for arg in args:
            if arg == "--":
                return
            why = DAEMON_OPTIONS.get(arg.split("=", 1)[0])
            if why is not None:
                command = self.prog.split()[-1]
                self.error(f"{arg.split('=', 1)[0]} is not an option of {command}: {why}")


def command_options_last(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """Move a command's own options given before the command to after it:
    `nadird --state-dir X dead-letters list` = `nadird dead-letters list --state-dir X`.

    The shared options (-c, --log-level...) are the main parser's too and stay
    put; an option neither knows is left for the parser to refuse."""
    commands = _commands(parser)
    main_options = parser._option_string_actions
    before: list[str] = []
    moved: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in commands:
            return [*before, arg, *moved, *argv[i + 1 :]]
        name, has_value = arg.split("=", 1)[0], "=" in arg
        action = main_options.get(name) or _command_option(commands, name)
        takes = 1 if action is not None and action.nargs != 0 and not has_value else 0
        if name in main_options or action is None or not arg.startswith("-"):
            before += argv[i : i + 1 + takes]
        else:
            moved += argv[i : i + 1 + takes]
        i += 1 + takes
    return argv


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _command_option(
    commands: dict[str, argparse.ArgumentParser], name: str
) -> argparse.Action | None:
    for command in commands.values():
        action = command._option_string_actions.get(name)
        if action is not None:
            return action
    return None


class DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default that says something; None, False and [] say nothing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default in (None, False, [], argparse.SUPPRESS) or "(default" in text:
            return text
        return super()._get_help_string(action) or text


def _shared(config_help: str = "YAML config file") -> CommandParser:
    # SUPPRESS, not None: a command's parser would otherwise overwrite the
    # value given before the command with its own default.
    shared = CommandParser(add_help=False)
    shared.add_argument(
        "-c", "--config", metavar="FILE", default=argparse.SUPPRESS, help=config_help
    )
    shared.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default=argparse.SUPPRESS,
        help="log level of this process (and of the workers `crawl` starts); "
        "default: the config's log_level, info",
    )
    shared.add_argument(
        "--log-format",
        choices=FORMATS,
        default=argparse.SUPPRESS,
        help="auto (default): console on a terminal, else json; also the workers' for `crawl`",
    )
    return shared


SHARED = _shared()
# For a command that takes no config file: -c is still parsed (and refused
# with a line that says so) but not offered in its help.
SHARED_NO_CONFIG = _shared(argparse.SUPPRESS)


def add_command(
    sub: argparse._SubParsersAction[CommandParser],
    name: str,
    text: str,
    parent: CommandParser = SHARED,
) -> CommandParser:
    """A command whose `-h` opens with what it does (the line `nadird -h`
    lists) and shows the defaults of its options."""
    return sub.add_parser(
        name,
        parents=[parent],
        formatter_class=DefaultsFormatter,
        help=text,
        description=text[0].upper() + text[1:] + ".",
    )
