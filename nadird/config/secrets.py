"""Secrets named in a config (`<key>_file` / `<key>_env`), read when a process starts.

Tokens, signing keys and passwords never sit in the YAML itself; a section
names where they are, and this reads them once, with a ConfigError that names
the key when the file or the variable is missing or empty.
"""

from __future__ import annotations

import os

from nadird.common.errors import ConfigError


def read_secret(source: str, key: str, file: str | None, env: str | None) -> str | None:
    """The value of `{key}_file` or `{key}_env` (stripped); None when neither is set."""
    if env:
        value = os.environ.get(env, "")
        if not value:
            raise ConfigError(source, f"{key}_env", f"environment variable {env} is not set")
        return value.strip()
    if file:
        try:
            with open(file, encoding="utf-8") as fh:
                value = fh.read().strip()
        except OSError as exc:
            why = f"cannot read {file}: {exc.strerror}"
            raise ConfigError(source, f"{key}_file", why) from None
        if not value:
            raise ConfigError(source, f"{key}_file", f"{file} is empty")
        return value
    return None
