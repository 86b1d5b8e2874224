"""The hottest functions of a py-spy profile (`--format raw`, collapsed stacks).

Shared by the benchmark scripts' --profile options:

    python scripts/pyspy_top.py PROFILE.txt [--top 25]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def short(frame: str) -> str:
    """`func (/long/path/module.py:12)` -> `func module.py:12`."""
    return frame.split(" (")[0] + " " + frame.rsplit("/", 1)[-1].rstrip(")")


def top_functions(raw: Path, top: int) -> list[str]:
    """Own (leaf) and inclusive share of the samples per function, best first.

    Process frames (py-spy --subprocesses) are left out: they are not code.
    """
    own: dict[str, int] = {}
    total: dict[str, int] = {}
    samples = 0
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [short(f) for f in stack.split(";") if not f.startswith("process ")]
        samples += count
        if not frames:
            continue
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for frame in set(frames):
            total[frame] = total.get(frame, 0) + count
    rows = sorted(own.items(), key=lambda kv: kv[1], reverse=True)[:top]
    return [
        f"{100 * n / samples:5.1f}% own {100 * total[name] / samples:5.1f}% total  {name}"
        for name, n in rows
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    for line in top_functions(args.profile, args.top):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
