"""Command line: `nadird --role master|worker -c FILE`, `crawl`, `export`.

Exit status: 0 success, 1 runtime error, 2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path

from nadird import __version__
from nadird.argtypes import comma_list, non_negative_float
from nadird.config import Config, load_config
from nadird.errors import ConfigError, StateError, StoreError
from nadird.logs import FORMATS, configure

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


def _host_ip(text: str) -> tuple[str, str]:
    host, sep, ip = text.partition("=")
    if not sep or not host or not ip:
        raise argparse.ArgumentTypeError(
            f"expected HOST=IP (e.g. example.test=127.0.0.1), got {text!r}"
        )
    return host, ip


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nadird", description=__doc__)
    parser.add_argument("--version", action="version", version=f"nadird {__version__}")
    parser.add_argument("--role", choices=["master", "worker"], help="run a daemon role")
    parser.add_argument("-c", "--config", help="YAML config file")
    parser.add_argument("--log-level", choices=["debug", "info", "warning", "error"])
    parser.add_argument(
        "--log-format", choices=FORMATS, help="auto (default): console on a terminal, else json"
    )
    parser.add_argument(
        "--exit-when-done", action="store_true", help="master: exit once the crawl is complete"
    )
    parser.add_argument(
        "--rebuild-seen",
        action="store_true",
        help="master: rebuild the seen set from the store and the frontier",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    crawl = sub.add_parser("crawl", help="crawl to completion with a local master and workers")
    crawl.add_argument("seed_urls", nargs="*", metavar="SEED_URL")
    crawl.add_argument("--seeds", help="file with one seed URL per line")
    crawl.add_argument("--workers", type=_positive_int, default=2)
    crawl.add_argument("--max-pages", type=_positive_int)
    crawl.add_argument("--max-depth", type=int)
    crawl.add_argument("--allow-domain", action="append", default=[], metavar="DOMAIN")
    crawl.add_argument("--out", help="write the crawled records as JSON lines")
    crawl.add_argument("--config", dest="crawl_config", help="base YAML config (jobs, fetch...)")
    crawl.add_argument(
        "--delay", type=non_negative_float, help="seconds between requests to a domain"
    )
    crawl.add_argument("--domain-concurrency", type=_positive_int)
    crawl.add_argument("--retries", type=int, help="retries of transient failures (default 3)")
    crawl.add_argument("--store", default="sqlite:///nadird-crawl.db", help="store URI")
    crawl.add_argument(
        "--resolve",
        type=_host_ip,
        action="append",
        default=[],
        metavar="HOST=IP",
        help="pin a host name (or *.pattern) to an address",
    )
    crawl.add_argument(
        "--allow-private",
        action="store_true",
        help="allow loopback, private and link-local destinations",
    )
    crawl.add_argument("--state-dir", help="keep master state here (default: a temp dir)")
    crawl.add_argument(
        "--render",
        action="store_true",
        help="render pages with JavaScript in headless Chromium (workers get a browser)",
    )
    crawl.add_argument(
        "--log-level", dest="crawl_log_level", choices=["debug", "info", "warning", "error"]
    )
    crawl.add_argument("--log-format", dest="crawl_log_format", choices=FORMATS)

    dead = sub.add_parser("dead-letters", help="list, retry or purge URLs whose retries ran out")
    dead.add_argument("action", choices=["list", "retry", "purge"])
    dead.add_argument("--config", dest="dead_config", help="master config (for master.state_dir)")
    dead.add_argument("--state-dir", help="the master's state directory")
    dead.add_argument("--job")
    dead.add_argument("--domain")

    for name, text in (
        ("status", "the master's stats (queues, leases, rates, errors, progress)"),
        ("nodes", "the workers the master knows"),
        ("submit", "submit seed URLs"),
        ("pause", "pause a job"),
        ("resume", "resume a job"),
        ("delete-job", "delete a job and drop its queued URLs"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("-c", "--config", dest="api_config", help="the master's config file")
        cmd.add_argument("--api", help="API URL (default: from the master's state dir)")
        cmd.add_argument("--token", help="API token (default: config or state dir)")
        if name == "submit":
            cmd.add_argument("words", nargs="+", metavar="URL")
            cmd.add_argument("--job", default="default")
        elif name in ("pause", "resume", "delete-job"):
            cmd.add_argument("words", nargs=1, metavar="JOB")

    keygen = sub.add_parser("keygen", help="write a CURVE keypair (NAME.key, NAME.key_secret)")
    keygen.add_argument("--out", required=True, help="directory for the key files")
    keygen.add_argument("--name", default="nadird", help="file name stem (e.g. master, worker-1)")

    export = sub.add_parser("export", help="write stored records as JSON lines or CSV")
    export.add_argument("--store", help="store URI (default: store.uri of --config)")
    export.add_argument("--config", dest="export_config")
    export.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    export.add_argument("--job")
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
    return parser


def _seeds(args: argparse.Namespace) -> list[str]:
    seeds = list(args.seed_urls)
    if args.seeds:
        try:
            lines = Path(args.seeds).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(
                args.seeds, "(file)", f"readable seed file ({exc.strerror})"
            ) from None
        seeds += [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    return seeds


def _crawl(args: argparse.Namespace) -> int:
    from nadird.crawl import CrawlOptions, run_crawl
    from nadird.daemon import run_async
    from nadird.progress import Console

    base = load_config(args.crawl_config) if args.crawl_config else Config()
    level = args.crawl_log_level or args.log_level or base.log_level
    console = Console(sys.stderr)
    fmt = configure(
        "crawl",
        base.node,
        level,
        console,
        args.crawl_log_format or args.log_format or base.log_format,
    )
    # The workers log at this level and in this format too.
    base = dataclasses.replace(base, log_level=level, log_format=fmt)
    seeds = _seeds(args)
    if not seeds and not base.seeds:
        raise ConfigError("(command line)", "SEED_URL", "at least one seed URL or --seeds FILE")
    opts = CrawlOptions(
        seeds=seeds,
        workers=args.workers,
        max_pages=args.max_pages,
        max_depth=args.max_depth,
        allow_domains=args.allow_domain,
        out=args.out,
        delay=args.delay,
        domain_concurrency=args.domain_concurrency,
        retries=args.retries,
        store=args.store,
        resolve=dict(args.resolve),
        allow_private=args.allow_private,
        state_dir=args.state_dir,
        render=args.render,
    )
    return run_async(run_crawl(opts, base, console))


def _export(args: argparse.Namespace) -> int:
    from nadird.store.export import UnknownField, export_to
    from nadird.store.open import open_store

    if args.format == "jsonl" and (args.fields or args.encoding != "utf-8"):
        option = "--fields" if args.fields else "--encoding"
        raise ConfigError("(command line)", option, "csv only (JSON lines are always UTF-8)")
    store_config = (load_config(args.export_config) if args.export_config else Config()).store
    uri = args.store or store_config.uri

    async def go() -> int:
        store = open_store(uri, store_config)
        await store.open()
        try:
            return await export_to(
                store, args.out, args.format, args.job, args.fields, args.encoding
            )
        except UnknownField as exc:
            raise ConfigError("(command line)", "--fields", str(exc)) from None
        finally:
            await store.close()

    rows = asyncio.run(go())
    print(f"exported {rows} records", file=sys.stderr)
    return EXIT_OK


def _dead_letters(args: argparse.Namespace) -> int:
    from nadird import deadletters

    state_dir = args.state_dir
    if state_dir is None:
        state_dir = (
            load_config(args.dead_config) if args.dead_config else Config()
        ).master.state_dir
    return deadletters.run(args.action, state_dir, args.job, args.domain)


def _client(args: argparse.Namespace) -> int:
    from nadird import client

    config = load_config(args.api_config) if args.api_config else Config()
    words = getattr(args, "words", [])
    try:
        return client.run(
            args.command, config, args.api, args.token, words, getattr(args, "job", "default")
        )
    except client.ApiError as exc:
        print(f"nadird: error: {exc}", file=sys.stderr)
        return EXIT_RUNTIME


def _keygen(args: argparse.Namespace) -> int:
    from nadird.security import generate_keypair, key_fingerprint, public_key

    public, secret = generate_keypair(args.out, args.name)
    print(f"public key: {public} (fingerprint {key_fingerprint(public_key(public))})")
    print(f"secret key: {secret} (mode 0600; keep it on this host)")
    return EXIT_OK


def _daemon(args: argparse.Namespace) -> int:
    from nadird.daemon import master_main, run_async, worker_main

    if not args.config:
        raise ConfigError("(command line)", "--config", "a config file for --role")
    config = load_config(args.config)
    if args.exit_when_done:
        config = dataclasses.replace(
            config, master=dataclasses.replace(config.master, exit_when_done=True)
        )
    configure(
        args.role,
        config.node,
        args.log_level or config.log_level,
        fmt=args.log_format or config.log_format,
    )
    from nadird.security import check_config_secrets

    check_config_secrets(config, args.config)
    if args.role == "master":
        return run_async(master_main(config, args.config, rebuild_seen=args.rebuild_seen))
    return run_async(worker_main(config, args.config))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "crawl":
            return _crawl(args)
        if args.command == "export":
            return _export(args)
        if args.command == "dead-letters":
            return _dead_letters(args)
        if args.command == "keygen":
            return _keygen(args)
        if args.command in ("status", "nodes", "submit", "pause", "resume", "delete-job"):
            return _client(args)
        if args.role:
            return _daemon(args)
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    except (ConfigError, StoreError) as exc:
        print(f"nadird: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except StateError as exc:
        print(f"nadird: error: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        return EXIT_RUNTIME
