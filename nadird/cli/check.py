"""`nadird check -c FILE`: what a master or a worker would refuse at start, without starting one.

Beyond the file's own checks (made when it loads): key files, the browser,
the store URI, the master's state directory when the file names one, and
the secrets the file names in environment variables or files (alert
channels, proxy providers, the API token, a MongoDB password), read from the
environment `check` runs in: run it with the service's environment.
"""

from __future__ import annotations

import argparse
import sys

from nadird.cli.config_file import file_sets
from nadird.cli.state_dir import check_state_dir
from nadird.common.errors import ConfigError, StoreError
from nadird.common.logs import configure
from nadird.config import Config, load_config
from nadird.config.api_token import MIN_TOKEN_CHARS
from nadird.config.secrets import read_secret

EXIT_OK = 0


def run_check(args: argparse.Namespace) -> int:
    path = args.config
    config = load_config(path)
    level = args.log_level or config.log_level
    configure("check", config.node, level, sys.stderr, args.log_format or config.log_format)
    _check_keys(config, path)
    _check_store(config, path)
    if file_sets(path, "master.state_dir"):
        # A worker's file names none: its master.state_dir is never used.
        check_state_dir(config.master.state_dir, path)
    check_secrets(config, path)
    seeds = len(config.seeds)
    print(f"{path}: ok ({len(config.jobs)} jobs, {seeds} seeds, node {config.node})")
    return EXIT_OK


def _check_keys(config: Config, path: str) -> None:
    import zmq.asyncio

    from nadird.protocol.curve import MasterSecurity, check_config_secrets, secure_client
    from nadird.worker.render.step import new_renderer

    check_config_secrets(config, path)
    MasterSecurity(config, path)  # key files and the allow-list, or loopback binds
    ctx = zmq.asyncio.Context()
    try:
        with ctx.socket(zmq.DEALER) as sock:
            secure_client(sock, config, path)  # a worker's key files
    finally:
        ctx.term()
    new_renderer(config)  # a javascript worker's browser


def _check_store(config: Config, path: str) -> None:
    from nadird.store.open import open_store

    try:
        open_store(config.store.uri, config.store)
    except StoreError as exc:
        raise ConfigError(path, "store.uri", str(exc)) from None


def check_secrets(config: Config, path: str) -> None:
    """Each secret the file names, read as the process that needs it reads it
    at start (a master refuses to start without its alert channels' and its
    API's, a worker without its proxy providers')."""
    for name, channel in config.alerts.channels.items():
        key = f"alerts.channels.{name}"
        read_secret(path, f"{key}.secret", channel.secret_file, channel.secret_env)
        read_secret(path, f"{key}.sign", channel.sign_file, channel.sign_env)
    for i, provider in enumerate(config.fetch.proxies.providers):
        key = f"fetch.proxies.providers[{i}]"
        read_secret(path, f"{key}.secret", provider.secret_file, provider.secret_env)
        read_secret(path, f"{key}.auth", provider.auth_file, provider.auth_env)
    if config.store.uri.startswith("mongodb"):
        store = config.store
        read_secret(path, "store.password", store.password_file, store.password_env)
    api = config.api
    if api.enabled and not api.token and api.token_env:
        token = read_secret(path, "api.token", None, api.token_env) or ""
        if len(token) < MIN_TOKEN_CHARS:
            why = f"a token of at least {MIN_TOKEN_CHARS} characters in {api.token_env}"
            raise ConfigError(path, "api.token_env", why)
