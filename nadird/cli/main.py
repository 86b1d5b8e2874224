"""Command line: `nadird --role master|worker -c FILE`, `crawl`, `parse`, `reextract`, `export`...

Exit status: 0 success, 1 runtime error, 2 usage or configuration error,
128 + N when `crawl` or `reextract` was stopped by signal N (130 for
Ctrl-C), 141 when stdout was closed early (`nadird status | head`).

Options may come before, between and after a command's positional
arguments; `-c/--config` and `--log-level` mean the same before the command
and after it (declared once, in SHARED, and given to every parser).
"""

from __future__ import annotations

import argparse
import os
import sys

from nadird import __version__
from nadird.cli.argtypes import (
    duration,
    host_ip,
    moment,
    non_negative_float,
    non_negative_int,
    out_file,
    positive_int,
    seed_url,
)
from nadird.cli.base import (
    EXIT_USAGE,
    SHARED,
    CommandParser,
    DefaultsFormatter,
    Parser,
    add_command,
    command_options_last,
)
from nadird.cli.tool_parsers import add_tools
from nadird.common.errors import (
    BindError,
    ConfigError,
    StateError,
    StoreError,
    SupersededError,
)

EXIT_OK, EXIT_RUNTIME = 0, 1
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells expect of a Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as if the write had killed the process
# Another master took the replica over (master/state/generation.py): starting
# again cannot help, and the shipped unit does not (RestartPreventExitStatus).
EXIT_SUPERSEDED = 3


DESCRIPTION = """\
A distributed web crawler: run a master and workers (--role), or a whole
crawl in one command (crawl). `nadird COMMAND -h` tells more.

Options may come before, between and after a command's arguments.
Exit status: 0 success, 1 runtime error (and a crawl that fetched nothing:
every URL failed), 2 usage or configuration error,
130/143 crawl or reextract stopped by SIGINT/SIGTERM, 141 stdout closed early."""


ARTICLE_HELP = (
    "extract every HTML page's article with no rule written: title, text, markdown, "
    "authors, dates, language, kind (the default job's article: true)"
)


def _add_fetch_options(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--resolve",
        type=host_ip,
        action="append",
        default=[],
        metavar="HOST=IP",
        help="pin a host name (or *.pattern) to an address; repeatable",
    )
    cmd.add_argument(
        "--allow-private",
        action="store_true",
        help="allow loopback, private and link-local destinations",
    )


def _add_job_overrides(crawl: argparse.ArgumentParser) -> None:
    """Options that override the `default` job of --config (or its defaults)."""
    crawl.add_argument(
        "--delay",
        type=non_negative_float,
        metavar="SECONDS",
        help="seconds between requests to a domain (default: the job's, else 1.0)",
    )
    crawl.add_argument(
        "--domain-concurrency",
        type=positive_int,
        metavar="N",
        help="requests in flight per domain (default 1)",
    )
    crawl.add_argument(
        "--retries",
        type=non_negative_int,
        metavar="N",
        help="retries of transient failures (default: the job's, 3)",
    )


def _add_crawl(sub: argparse._SubParsersAction[CommandParser]) -> None:
    crawl = sub.add_parser(
        "crawl",
        parents=[SHARED],
        formatter_class=DefaultsFormatter,
        help="crawl to completion with a local master and workers",
        description="Crawl to completion with a master in this process and N workers.",
    )
    crawl.add_argument(
        "seed_urls",
        nargs="*",
        metavar="SEED_URL",
        type=seed_url,
        help="http:// or https:// URLs to start from (with --seeds, or the config's seeds)",
    )
    crawl.add_argument("--seeds", metavar="FILE", help="file with one seed URL per line")
    crawl.add_argument(
        "--workers", type=positive_int, default=2, metavar="N", help="worker processes"
    )
    crawl.add_argument(
        "--max-pages",
        type=positive_int,
        metavar="N",
        help="stop after N pages (default: the job's max_pages, else no limit)",
    )
    crawl.add_argument(
        "--max-depth",
        type=non_negative_int,
        metavar="N",
        help="links followed from a seed, 0: seeds only (default: the job's max_depth, "
        "else no limit)",
    )
    crawl.add_argument(
        "--allow-domain",
        action="append",
        default=[],
        metavar="DOMAIN",
        help="follow links to DOMAIN only (repeatable; default scope: same domain)",
    )
    crawl.add_argument(
        "--out", type=out_file, metavar="FILE", help="also write the records: .jsonl/.json or .csv"
    )
    _add_job_overrides(crawl)
    _add_crawl_run(crawl)


def _add_crawl_run(crawl: argparse.ArgumentParser) -> None:
    """Where a crawl keeps things, how it fetches, and how long it runs."""
    crawl.add_argument(
        "--store",
        metavar="URI",
        help="store URI (default: store.uri of --config if it names one, "
        "else sqlite:///nadird-crawl.db)",
    )
    _add_fetch_options(crawl)
    crawl.add_argument(
        "--state-dir",
        metavar="DIR",
        help="keep master state here, to resume later (default: master.state_dir of "
        "--config if it names one, else a temporary directory, removed at the end)",
    )
    crawl.add_argument(
        "--render",
        action="store_true",
        help="render pages with JavaScript in headless Chromium (workers get a browser)",
    )
    crawl.add_argument(
        "--revisit",
        type=duration,
        metavar="EVERY",
        help="fetch every page this crawl stores again every EVERY (e.g. 10m): never complete",
    )
    crawl.add_argument(
        "--feeds",
        action="store_true",
        help="follow news sites: find feeds and sitemaps, check them often, fetch new "
        "articles first (the default job's feeds: true)",
    )
    crawl.add_argument("--article", action="store_true", help=ARTICLE_HELP)
    crawl.add_argument(
        "--warc",
        metavar="DIR",
        help="write every fetch into WARC files in DIR (the config's warc: section, if any)",
    )
    crawl.add_argument(
        "--for",
        type=duration,
        metavar="DURATION",
        help="stop after DURATION (e.g. 1h) and print the summary (exit status 0)",
    )


def _add_parse(sub: argparse._SubParsersAction[CommandParser]) -> None:
    parse = add_command(
        sub, "parse", "fetch one URL as a worker would and print its fields and links"
    )
    parse.add_argument("url", metavar="URL", type=seed_url, help="the http(s) URL to fetch")
    parse.add_argument("--job", default="default", help="the job of --config whose rules apply")
    parse.add_argument("--article", action="store_true", help=ARTICLE_HELP)
    _add_fetch_options(parse)


def _add_reextract(sub: argparse._SubParsersAction[CommandParser]) -> None:
    redo = add_command(
        sub,
        "reextract",
        "run a job's current rules over the pages already stored (fetches nothing)",
    )
    redo.add_argument("--job", required=True, help="the job of --config whose rules apply")
    redo.add_argument("--store", help="store URI (default: store.uri of --config)")
    redo.add_argument(
        "--since",
        type=moment,
        metavar="TIME",
        help="only pages fetched at or after TIME (ISO 8601, or 6h ago)",
    )
    redo.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="parse in N processes (default: one per core)",
    )
    redo.add_argument(
        "--restart", action="store_true", help="ignore the checkpoint of an interrupted run"
    )
    redo.add_argument(
        "--force",
        action="store_true",
        help="write even when the rules would leave every item that had fields empty",
    )
    redo.add_argument(
        "--chunk",
        type=positive_int,
        default=500,
        metavar="N",
        help="pages per read and per write transaction (and per checkpoint)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="nadird",
        description=DESCRIPTION,
        parents=[SHARED],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"nadird {__version__}")
    parser.add_argument("--role", choices=["master", "worker"], help="run a daemon role")
    parser.add_argument(
        "--exit-when-done", action="store_true", help="master: exit once the crawl is complete"
    )
    parser.add_argument(
        "--rebuild-seen",
        action="store_true",
        help="master: rebuild the seen set from the store and the frontier",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    _add_crawl(sub)
    _add_parse(sub)
    _add_reextract(sub)
    add_tools(sub)
    return parser


def _refuse_misplaced(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A global option that does not apply is refused, never ignored."""
    flags = (("--exit-when-done", args.exit_when_done), ("--rebuild-seen", args.rebuild_seen))
    master_only = [flag for flag, given in flags if given]
    if args.command is not None and args.role is not None:
        parser.error(f"--role runs a daemon and takes no command (got {args.command!r})")
    if master_only and args.role != "master":
        parser.error(f"{master_only[0]} applies to --role master only")
    if args.config is not None and not getattr(args, "takes_config", True):
        parser.error(f"{args.command} takes no --config")
    if args.config is None and getattr(args, "needs_config", False):
        parser.error(f"{args.command} needs -c FILE")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(command_options_last(parser, sys.argv[1:] if argv is None else argv))
    for name in ("config", "log_level", "log_format"):
        if not hasattr(args, name):
            setattr(args, name, None)
    _refuse_misplaced(parser, args)
    if args.command is None and args.role is None:
        parser.print_help(sys.stderr)
        parser.exit(EXIT_USAGE)
    return args


def _quiet_stdout() -> None:
    """stdout's reader is gone: nothing more can be said there, and the
    interpreter's own flush at exit must not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        from nadird.cli.commands import run_command

        status = run_command(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler
        return status
    except (ConfigError, StoreError, BindError) as exc:
        print(f"nadird: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SupersededError as exc:
        print(f"nadird: error: {exc}", file=sys.stderr)
        return EXIT_SUPERSEDED
    except StateError as exc:
        print(f"nadird: error: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
