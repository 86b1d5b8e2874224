"""Cron slots in a named time zone, as epoch seconds.

The expressions are evaluated by cronsim rather than croniter: cronsim has no
dependencies (croniter pulls in python-dateutil), ships type hints (mypy
strict checks our calls), is built on zoneinfo, and follows Debian cron during
DST changes (a daily job in a skipped hour still runs that day, a repeated
hour does not run it twice), which its test suite pins down. It is
maintained for a cron-monitoring service, whose whole job is getting this right.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

# Checking an expression starts from a fixed date: validation must not read the clock.
_PROBE_START = datetime(2000, 1, 1, tzinfo=UTC)
# An ambiguous wall-clock start may yield a slot at or before it; skip at most this many.
_MAX_SKIPS = 8


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name`; ValueError naming it when unknown or malformed."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"expected an IANA time zone like Asia/Shanghai, got {name!r}") from None


def check_expression(expr: str, tz: ZoneInfo) -> None:
    """ValueError unless `expr` is a cron expression that fires at least once."""
    try:
        slots = CronSim(expr, _PROBE_START.astimezone(tz))
        next(slots)
    except CronSimError as exc:
        raise ValueError(f"expected a cron expression like '*/10 8-20 * * 1-5' ({exc})") from None
    except StopIteration:
        raise ValueError(f"expected a cron expression that ever fires, got {expr!r}") from None


def next_slot(expr: str, tz: ZoneInfo, after: float) -> float | None:
    """The first slot of `expr` strictly after epoch second `after`, or None if none follows.

    cronsim walks wall-clock time; around a repeated hour a naive start can
    give back a slot that already passed, so slots not after `after` are skipped.
    """
    slots = CronSim(expr, datetime.fromtimestamp(after, tz))
    for _ in range(_MAX_SKIPS):
        try:
            slot = next(slots).timestamp()
        except StopIteration:
            return None
        if slot > after:
            return slot
    return None
