"""The commands that read, write or ask rather than crawl: check, dead
letters, the management API's clients, keygen, export (their options only;
commands.py runs them)."""

from __future__ import annotations

import argparse

from nadird.cli.argtypes import comma_list, moment, seed_request
from nadird.cli.base import SHARED_NO_CONFIG, CommandParser, add_command
from nadird.cli.warc import add_warc

CLIENT_COMMANDS = {
    "status": "the master's stats (queues, leases, rates, errors, progress)",
    "nodes": "the workers the master knows",
    "submit": "submit seed URLs",
    "pause": "pause a job",
    "resume": "resume a job",
    "delete-job": "delete a job and drop its queued URLs",
}


def add_tools(sub: argparse._SubParsersAction[CommandParser]) -> None:
    check = add_command(sub, "check", "validate a config file (either role) and exit")
    check.set_defaults(needs_config=True)

    dead = add_command(sub, "dead-letters", "list, retry or purge URLs whose retries ran out")
    dead.add_argument(
        "action",
        choices=["list", "retry", "purge"],
        help="list: one JSON line each; retry: queue them again with fresh tries; "
        "purge: forget them",
    )
    dead.add_argument(
        "--state-dir",
        metavar="DIR",
        help="the master's state directory (default: master.state_dir of -c)",
    )
    dead.add_argument("--job", help="only the dead letters of this job")
    dead.add_argument("--domain", help="only the dead letters of this domain")
    _add_clients(sub)
    _add_keygen(sub)
    _add_restore(sub)
    _add_export(sub)
    add_warc(sub)


def _add_clients(sub: argparse._SubParsersAction[CommandParser]) -> None:
    """The commands that talk to a running master's API."""
    for name, text in CLIENT_COMMANDS.items():
        cmd = add_command(sub, name, text)
        cmd.add_argument("--api", help="API URL (default: from the master's state dir)")
        cmd.add_argument("--token", help="API token (default: config or state dir)")
        if name == "submit":
            cmd.add_argument(
                "words",
                nargs="+",
                metavar="URL",
                type=seed_request,
                help="a URL, or a request as a JSON object",
            )
            cmd.add_argument("--job", default="default", help="the job the seeds belong to")
        elif name in ("pause", "resume", "delete-job"):
            cmd.add_argument("words", nargs=1, metavar="JOB", help="the job's name")


def _add_keygen(sub: argparse._SubParsersAction[CommandParser]) -> None:
    keygen = add_command(
        sub, "keygen", "write a CURVE keypair (NAME.key, NAME.key_secret)", SHARED_NO_CONFIG
    )
    keygen.add_argument("--out", required=True, help="directory for the key files")
    keygen.add_argument("--name", default="nadird", help="file name stem (e.g. master, worker-1)")
    keygen.set_defaults(takes_config=False)


def _add_restore(sub: argparse._SubParsersAction[CommandParser]) -> None:
    restore = add_command(
        sub, "restore", "fetch a master's state directory back from its replica (master.replica)"
    )
    restore.add_argument(
        "--replica", metavar="URL", help="the replica (default: master.replica of -c)"
    )
    restore.add_argument(
        "--state-dir",
        metavar="DIR",
        help="where to restore, empty or new (default: master.state_dir of -c)",
    )
    restore.add_argument(
        "--force", action="store_true", help="restore into a directory that holds files"
    )
    restore.add_argument(
        "--sftp-key",
        metavar="FILE",
        help="sftp:// replica: the private key (default: master.replica_sftp_key of -c)",
    )


def _add_export(sub: argparse._SubParsersAction[CommandParser]) -> None:
    export = add_command(sub, "export", "write stored records as JSON lines or CSV")
    export.add_argument("--store", help="store URI (default: store.uri of --config)")
    export.add_argument(
        "--format", choices=["jsonl", "csv"], default="jsonl", help="one JSON object a line, or CSV"
    )
    export.add_argument("--job", help="only the records of this job")
    export.add_argument("--out", help="output file (default: stdout)")
    export.add_argument(
        "--encoding",
        choices=["utf-8", "utf-8-sig", "gb18030"],
        default="utf-8",
        help="csv: text encoding (utf-8-sig: with a byte order mark, for Excel)",
    )
    export.add_argument(
        "--fields", type=comma_list, metavar="A,B,C", help="csv: these columns, in this order"
    )
    export.add_argument(
        "--changes",
        action="store_true",
        help="the history of revisited pages: one JSON line per change, old and new values",
    )
    export.add_argument(
        "--items",
        action="store_true",
        help="the keyed items of jobs with item_key: one JSON line per (job, key)",
    )
    export.add_argument(
        "--since",
        type=moment,
        metavar="TIME",
        help="only records fetched from TIME (--changes: changes found from TIME);"
        " ISO 8601, epoch seconds, or 6h ago",
    )
    export.add_argument(
        "--cursor",
        metavar="FILE",
        help="only records not written by the last export with this FILE, which is"
        " then updated (created when absent, from --since if given): poll what is new",
    )
