"""The repository's root and the shipped systemd unit's settings."""

from support import REPO

ROOT = REPO


def unit_settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in (ROOT / "systemd" / "nadird@.service").read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            settings.setdefault(key, []).append(value)
    return settings
