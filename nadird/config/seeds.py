"""Seeds: a URL, or a request (nadird/job/request.py) with the job it belongs to.

One reader for every place seeds come from (the config's `seeds:`, a line of
`nadird crawl --seeds FILE`, an argument of `nadird submit`), so they all take
the same shapes and refuse the same things with the same words.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nadird.common.errors import ConfigError
from nadird.job.request import RequestError, RequestSpec, parse

SEED_KEYS = ("job",)


@dataclass(frozen=True)
class Seed:
    url: str
    job: str = "default"
    request: RequestSpec | None = None  # None: a plain GET of `url`

    def spec(self) -> RequestSpec:
        return self.request if self.request is not None else RequestSpec(self.url)

    def key(self) -> tuple[str, str, bytes | None]:
        """What tells two seeds apart (a reload admits only new ones)."""
        return self.url, self.job, self.spec().pack()


def seed_of(item: Any) -> Seed:
    """A seed from a URL or a request mapping with an optional `job`;
    RequestError naming the key otherwise. The URL is checked by the caller."""
    job = "default"
    if isinstance(item, Mapping) and "job" in item:
        job = item["job"]
        if not isinstance(job, str):
            raise RequestError("job", f"expected a string, got {type(job).__name__}")
        item = {k: v for k, v in item.items() if k != "job"}
    spec = parse(item)
    return Seed(spec.url, job, None if spec.plain else spec)


def config_seeds(raw: Any, source: str) -> list[str | Seed]:
    """The config's `seeds:` list; a ConfigError names the item and the key."""
    if not isinstance(raw, list):
        raise ConfigError(source, "seeds", f"expected a list, got {type(raw).__name__}")
    seeds: list[str | Seed] = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            seeds.append(item)
            continue
        try:
            seeds.append(seed_of(item))
        except RequestError as exc:
            raise ConfigError(source, _where(f"seeds[{i}]", exc.key, "."), exc.reason) from None
    return seeds


def line_seed(line: str, source: str, number: int) -> Seed:
    """A line of a seeds file: a URL, or a request as one JSON object."""
    if not line.startswith("{"):
        return Seed(line)
    try:
        data = json.loads(line, parse_constant=_no_constant)
    except ValueError as exc:
        raise ConfigError(source, f"line {number}", f"a URL or a JSON object ({exc})") from None
    try:
        return seed_of(data)
    except RequestError as exc:
        raise ConfigError(source, _where(f"line {number}", exc.key, ": "), exc.reason) from None


def _where(item: str, key: str, joint: str) -> str:
    return item if key == "(request)" else f"{item}{joint}{key}"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
