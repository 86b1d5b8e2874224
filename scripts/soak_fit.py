"""The fits of scripts/soak.py: growth per hour of each role's samples after a warm-up.

Every process incarnation (one pid) gets its own intercept and all share one
slope (least squares on the values centred per incarnation): a restart's
drop in RSS is not read as a fall, and a short-lived incarnation weighs
little. Disk is the master's state dir and store, which outlive restarts:
one plain line.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

HOUR = 3600.0


def pooled_slope(groups: list[list[tuple[float, float]]]) -> float | None:
    """The common slope (per second) of lines with one intercept per group."""
    sxy = sxx = 0.0
    for points in groups:
        if len(points) < 2:
            continue
        mean_t = sum(t for t, _ in points) / len(points)
        mean_y = sum(y for _, y in points) / len(points)
        sxy += sum((t - mean_t) * (y - mean_y) for t, y in points)
        sxx += sum((t - mean_t) ** 2 for t, _ in points)
    return sxy / sxx if sxx > 0 else None


def per_hour(slope: float | None) -> float | None:
    return None if slope is None else round(slope * HOUR, 3)


def read_samples(path: Path, warmup: float, rewarm: float, until: float) -> list[dict[str, Any]]:
    kept = []
    with open(path, newline="", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            t, started = float(row["t"]), float(row["started"])
            restarted = started > 0
            if t < warmup or t > until or (restarted and t < started + rewarm):
                continue
            kept.append({**row, "t": t})
    return kept


def fit_role(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by_pid: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_pid[row["pid"]].append(row)
    incarnations = list(by_pid.values())
    fit: dict[str, Any] = {"samples": len(rows), "incarnations": len(incarnations)}
    for field in ("rss_mb", "fds"):
        groups = [[(r["t"], float(r[field])) for r in group] for group in incarnations]
        fit[f"{field}_per_h"] = per_hour(pooled_slope(groups))
    longest = max(incarnations, key=lambda g: g[-1]["t"] - g[0]["t"])
    span = longest[-1]["t"] - longest[0]["t"]
    rss = [(r["t"], float(r["rss_mb"])) for r in longest]
    fit["longest"] = {
        "name": longest[0]["name"],
        "pid": longest[0]["pid"],
        "hours": round(span / HOUR, 2),
        "rss_mb_first_last": [rss[0][1], rss[-1][1]],
        "rss_mb_per_h": per_hour(pooled_slope([rss])),
    }
    fit["rss_mb_max"] = max(float(r["rss_mb"]) for r in rows)
    return fit


def summarize(path: Path, warmup: float, rewarm: float, until: float = math.inf) -> dict[str, Any]:
    rows = read_samples(path, warmup, rewarm, until)
    if not rows:
        return {"fits": {}, "note": "no samples after the warm-up"}
    fits: dict[str, Any] = {}
    for role in sorted({r["role"] for r in rows}):
        fits[role] = fit_role([r for r in rows if r["role"] == role])
    disk = [(r["t"], float(r["disk_mb"])) for r in rows if r["disk_mb"] != ""]
    if disk:
        fits["disk"] = {
            "mb_first_last": [disk[0][1], disk[-1][1]],
            "mb_per_h": per_hour(pooled_slope([disk])),
        }
    span = [min(r["t"] for r in rows), max(r["t"] for r in rows)]
    return {"fits": fits, "fitted_seconds": span, "warmup": warmup, "rewarm": rewarm}


def activity(out: Path, warmup: float, until: float = math.inf) -> dict[str, Any]:
    """What the crawl did meanwhile: revisit checks per second (the master's
    own figure, median of the samples) and the daemons that exited unasked."""
    rates = []
    with open(out / "stats.jsonl", encoding="utf-8") as file:
        for line in file:
            stats = json.loads(line)
            if warmup <= stats["t"] <= until and "revisit_checks_per_second" in stats:
                rates.append(stats["revisit_checks_per_second"])
    with open(out / "events.jsonl", encoding="utf-8") as file:
        events = [json.loads(line) for line in file]
    return {
        "revisit_checks_per_second_median": statistics.median(rates) if rates else None,
        "exited_unasked": sum(e["event"] == "exited" for e in events),
        "kills": sum(e["event"] == "killed" for e in events),
        "sighups": sum(e["event"] == "hup" for e in events),
    }
