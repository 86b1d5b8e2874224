"""What each command of the command line does, once its options are parsed (cli.py)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from nadird.cli.argtypes import check_seed
from nadird.common.errors import ConfigError
from nadird.common.logs import configure
from nadird.config import Config, Seed, load_config
from nadird.config.seeds import line_seed

if TYPE_CHECKING:
    from nadird.cli.crawl import CrawlOptions
    from nadird.store.backend import Store
    from nadird.store.cursor import Cursor

EXIT_OK, EXIT_RUNTIME = 0, 1


def _config(args: argparse.Namespace) -> Config:
    return load_config(args.config) if args.config else Config()


def _log_to_stderr(args: argparse.Namespace, role: str, config: Config) -> None:
    """Commands log to stderr (stdout carries their output); daemons to stdout."""
    level = args.log_level or config.log_level
    configure(role, config.node, level, sys.stderr, args.log_format or config.log_format)


def _seeds(args: argparse.Namespace, base: Config) -> list[Seed]:
    for i, seed in enumerate(base.seed_list()):
        try:
            check_seed(seed.url)
        except ValueError as exc:
            raise ConfigError(args.config, f"seeds[{i}]", f"a crawlable URL ({exc})") from None
    seeds = [Seed(url) for url in args.seed_urls]
    if args.seeds:
        seeds += _seeds_file(args.seeds, base)
    if not seeds and not base.seeds:
        raise ConfigError("(command line)", "SEED_URL", "at least one seed URL or --seeds FILE")
    return seeds


def _seeds_file(path: str, base: Config) -> list[Seed]:
    """One seed per line: a URL, or a request as a JSON object (see config/seeds.py)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(path, "(file)", f"readable seed file ({exc.strerror})") from None
    seeds = []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        seed = line_seed(text, path, number)
        try:
            check_seed(seed.url)
        except ValueError as exc:
            where = f"line {number}"
            raise ConfigError(path, where, f"a crawlable URL ({exc})") from None
        if seed.job not in base.jobs:
            known = ", ".join(sorted(base.jobs))
            raise ConfigError(path, f"line {number}: job", f"one of: {known}")
        seeds.append(seed)
    return seeds


def _crawl(args: argparse.Namespace) -> int:
    from nadird.cli.crawl import override_jobs, run_crawl
    from nadird.cli.daemon import run_async
    from nadird.common.progress import Console

    opts = _crawl_options(args)
    # The command line's changes to the jobs are made before the config's
    # checks, which then judge the crawl that will run.
    if args.config:
        base = load_config(args.config, lambda config: override_jobs(config, opts))
    else:
        base = override_jobs(Config(), opts)
    level = args.log_level or base.log_level
    console = Console(sys.stderr)
    fmt = configure("crawl", base.node, level, console, args.log_format or base.log_format)
    # The workers log at this level and in this format too.
    base = dataclasses.replace(base, log_level=level, log_format=fmt)
    opts.seeds = _seeds(args, base)
    if args.out is not None and not Path(args.out).resolve().parent.is_dir():
        raise ConfigError(args.out, "--out", "a file in an existing directory")
    _crawl_places(args, base, opts)
    return run_async(run_crawl(opts, base, console))


def _crawl_options(args: argparse.Namespace) -> CrawlOptions:
    from nadird.cli.crawl import CrawlOptions

    return CrawlOptions(
        seeds=[],
        workers=args.workers,
        max_pages=args.max_pages,
        max_depth=args.max_depth,
        allow_domains=args.allow_domain,
        out=args.out,
        delay=args.delay,
        domain_concurrency=args.domain_concurrency,
        retries=args.retries,
        resolve=dict(args.resolve),
        allow_private=args.allow_private,
        render=args.render,
        log_level=args.log_level,
        revisit=args.revisit,
        feeds=args.feeds,
        article=args.article,
        run_for=getattr(args, "for"),
        warc=args.warc,
    )


def _crawl_places(args: argparse.Namespace, base: Config, opts: CrawlOptions) -> None:
    """The store and the state directory: the command line's, else those the
    config file names, else the crawl's own (nadird-crawl.db, a temporary
    directory), so that `nadird export -c FILE` reads what `crawl -c FILE` wrote."""
    from nadird.cli.config_file import file_sets

    if args.store is not None:
        opts.store = args.store
    elif file_sets(args.config, "store.uri"):
        opts.store = base.store.uri
    if args.state_dir is not None:
        opts.state_dir = args.state_dir
    elif file_sets(args.config, "master.state_dir"):
        opts.state_dir = base.master.state_dir
        opts.state_dir_source = (args.config, "master.state_dir")


def _parse(args: argparse.Namespace) -> int:
    from nadird.cli.daemon import run_async
    from nadird.cli.probe import probe

    config = _config(args)
    _log_to_stderr(args, "parse", config)
    if args.job not in config.jobs:
        known = ", ".join(sorted(config.jobs))
        raise ConfigError(args.config or "(command line)", "--job", f"one of: {known}")
    fetch = dataclasses.replace(
        config.fetch,
        resolve={**config.fetch.resolve, **dict(args.resolve)},
        allow_private=args.allow_private or config.fetch.allow_private,
    )
    config = dataclasses.replace(config, fetch=fetch)
    job = config.jobs[args.job]
    if args.article:
        try:
            job = dataclasses.replace(job, article=job.article or True)
        except ValueError as e:  # a rule --article does not go with (parser: lexbor)
            raise ConfigError(args.config or "(command line)", f"jobs.{args.job}", str(e)) from e
    return run_async(probe(config, job, args.url, sys.stdout))


def _reextract(args: argparse.Namespace) -> int:
    from nadird.cli.daemon import run_async
    from nadird.common.progress import Console
    from nadird.reextract.command import run
    from nadird.reextract.run import Options
    from nadird.reextract.tally import Progress

    if not args.config:  # the built-in job has no fields: it would clear every item
        why = f"the config file with the rules of job {args.job!r} (reextract applies them)"
        raise ConfigError("(command line)", "-c/--config", why)
    config = _config(args)
    console = Console(sys.stderr)
    level = args.log_level or config.log_level
    configure("reextract", config.node, level, console, args.log_format or config.log_format)
    if args.job not in config.jobs:
        known = ", ".join(sorted(config.jobs))
        where = args.config or "(command line)"
        raise ConfigError(where, "--job", f"unknown job {args.job!r}; the config has {known}")
    opts = Options(args.since, args.restart, args.jobs, args.chunk, args.force)
    _existing_store(args, config)  # nothing to re-extract in a file not there
    uri = args.store or config.store.uri
    progress = Progress(console)
    return run_async(run(config, args.job, uri, opts, sys.stdout, progress, args.config))


def _check(args: argparse.Namespace) -> int:
    from nadird.cli.check import run_check

    return run_check(args)


def _export(args: argparse.Namespace) -> int:
    from nadird.store.export import UnknownField, export_to

    if args.since is not None and args.items:
        raise ConfigError("(command line)", "--since", "not with --items")
    if args.changes and args.items:
        raise ConfigError("(command line)", "--items", "not with --changes")
    if args.cursor is not None and (args.changes or args.items):
        raise ConfigError(
            "(command line)", "--cursor", "records only (not with --changes, --items)"
        )
    if args.changes or args.items:
        return _export_lines(args)
    if args.format == "jsonl" and (args.fields or args.encoding != "utf-8"):
        option = "--fields" if args.fields else "--encoding"
        raise ConfigError("(command line)", option, "csv only (JSON lines are always UTF-8)")
    cursor = _cursor(args)
    config = _config(args)
    _log_to_stderr(args, "export", config)
    store = _existing_store(args, config)

    async def go() -> tuple[int, str]:
        await store.open()
        try:
            rows = await export_to(
                store,
                args.out,
                args.format,
                args.job,
                args.fields,
                args.encoding,
                args.since,
                cursor,
            )
        except UnknownField as exc:
            raise ConfigError("(command line)", "--fields", str(exc)) from None
        else:
            return rows, await _no_such_job(store, args.job, rows)
        finally:
            await store.close()

    rows, note = asyncio.run(go())
    print(f"exported {rows} records{note}", file=sys.stderr)
    return EXIT_OK


def _cursor(args: argparse.Namespace) -> Cursor | None:
    """The --cursor file's state (--since starts a new one); exit 2 on a bad file."""
    from nadird.store.cursor import Cursor, CursorError

    if args.cursor is None:
        return None
    try:
        return Cursor(args.cursor, args.since)
    except CursorError as exc:
        raise ConfigError("(command line)", "--cursor", str(exc)) from None


def _export_lines(args: argparse.Namespace) -> int:
    """`export --changes` and `export --items`: JSON lines of their own shapes."""
    from nadird.store.export import export_changes, export_items

    option = "--items" if args.items else "--changes"
    if args.format != "jsonl" or args.fields:
        raise ConfigError("(command line)", option, "JSON lines only (no --format csv, --fields)")
    config = _config(args)
    _log_to_stderr(args, "export", config)
    store = _existing_store(args, config)

    async def go() -> tuple[int, str]:
        await store.open()
        try:
            if args.items:
                rows = await export_items(store, args.out, args.job)
            else:
                rows = await export_changes(store, args.out, args.job, args.since)
            return rows, await _no_such_job(store, args.job, rows)
        finally:
            await store.close()

    rows, note = asyncio.run(go())
    print(f"exported {rows} {'keyed items' if args.items else 'changes'}{note}", file=sys.stderr)
    return EXIT_OK


def _existing_store(args: argparse.Namespace, config: Config) -> Store:
    """The store `--store` (or the config's store.uri) names, refused when it is
    a SQLite file that does not exist: opening it would create an empty store
    at a mistyped path and export nothing, as if the crawl had stored nothing."""
    from nadird.store.open import open_store
    from nadird.store.sqlite.store import SqliteStore

    store = open_store(args.store or config.store.uri, config.store)
    if isinstance(store, SqliteStore) and not Path(store.path).exists():
        where, key = ("(command line)", "--store") if args.store else (args.config, "store.uri")
        reason = f"no file {store.path} (export and reextract read a store, never create one)"
        raise ConfigError(where or "(defaults)", key, reason)
    return store


async def _no_such_job(store: Store, job: str | None, rows: int) -> str:
    """What to add to "exported 0 ..." when --job names a job the store has no page of."""
    if job is None or rows or await store.count(job):
        return ""
    return f" (the store holds no page of job {job!r})"


def _dead_letters(args: argparse.Namespace) -> int:
    from nadird.cli import deadletters

    config = _config(args)
    _log_to_stderr(args, "dead-letters", config)
    state_dir = args.state_dir or config.master.state_dir
    return deadletters.run(args.action, state_dir, args.job, args.domain)


def _client(args: argparse.Namespace) -> int:
    from nadird.cli import client

    config = _config(args)
    _log_to_stderr(args, args.command, config)
    words = getattr(args, "words", [])
    try:
        return client.run(
            args.command, config, args.api, args.token, words, getattr(args, "job", "default")
        )
    except client.ApiError as exc:
        print(f"nadird: error: {exc}", file=sys.stderr)
        return EXIT_RUNTIME


def _keygen(args: argparse.Namespace) -> int:
    from nadird.protocol.curve import generate_keypair, key_fingerprint, public_key

    public, secret = generate_keypair(args.out, args.name)
    print(f"public key: {public} (fingerprint {key_fingerprint(public_key(public))})")
    print(f"secret key: {secret} (mode 0600; keep it on this host)")
    return EXIT_OK


def _restore(args: argparse.Namespace) -> int:
    from nadird.cli import restore

    config = _config(args) if args.config else None
    url, state_dir, where = restore.sources(args.replica, args.state_dir, config, args.config)
    key = args.sftp_key or (config.master.replica_sftp_key if config is not None else None)
    return restore.run(url, state_dir, args.force, where=where, sftp_key=key)


def _daemon(args: argparse.Namespace) -> int:
    from nadird.cli.daemon import master_main, run_role, worker_main

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
    from nadird.protocol.curve import check_config_secrets

    check_config_secrets(config, args.config)
    if args.role == "master":
        from nadird.cli.state_dir import prepare_state_dir

        prepare_state_dir(config.master.state_dir, args.config)
        return run_role(master_main(config, args.config, rebuild_seen=args.rebuild_seen))
    return run_role(worker_main(config, args.config))


def _warc(args: argparse.Namespace) -> int:
    from nadird.cli.warc import run_warc

    return run_warc(args)


COMMANDS = {
    "crawl": _crawl,
    "parse": _parse,
    "reextract": _reextract,
    "check": _check,
    "export": _export,
    "dead-letters": _dead_letters,
    "keygen": _keygen,
    "restore": _restore,
    "warc": _warc,
    **dict.fromkeys(("status", "nodes", "submit", "pause", "resume", "delete-job"), _client),
}


def run_command(args: argparse.Namespace) -> int:
    if args.command is None:
        return _daemon(args)
    return COMMANDS[args.command](args)
