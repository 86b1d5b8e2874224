"""The management API's bearer token, as the master and `nadird status` find it.

One loader for both sides, so that a token the master accepts (api.token,
api.token_env, api.token_file or the generated state_dir/api.token) is the
one the command line sends.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from nadird.common.errors import ConfigError
from nadird.common.logs import get_logger
from nadird.config import ApiConfig

log = get_logger()
MIN_TOKEN_CHARS = 16


def load_token(api: ApiConfig, state_dir: str, create: bool = False) -> str:
    """The configured token, else the token file's.

    The master passes create=True: a missing file is then written (mode 0600)
    with a fresh token. A client never creates one: a token no master knows
    would only be refused.
    """
    if api.token:
        return api.token
    if api.token_env:
        value = os.environ.get(api.token_env, "").strip()
        if len(value) < MIN_TOKEN_CHARS:
            raise ConfigError(
                "(environment)",
                api.token_env,
                f"a token of at least {MIN_TOKEN_CHARS} characters (api.token_env)",
            )
        return value
    path = Path(api.token_file or Path(state_dir) / "api.token")
    if create and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(32) + "\n")
        log.info("api_token_created", path=str(path))
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(
            str(path), "api.token_file", f"a readable token file ({exc.strerror}; or --token)"
        ) from None
