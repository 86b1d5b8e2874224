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
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


class DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default that says something; None, False and [] say nothing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default in (None, False, [], argparse.SUPPRESS) or "(default" in text:
            return text
        return super()._get_help_string(action) or text


def _shared() -> CommandParser:
    # SUPPRESS, not None: a command's parser would otherwise overwrite the
    # value given before the command with its own default.
    shared = CommandParser(add_help=False)
    shared.add_argument(
        "-c", "--config", metavar="FILE", default=argparse.SUPPRESS, help="YAML config file"
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
