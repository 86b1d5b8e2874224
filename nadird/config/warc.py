"""The `warc:` section: where the master writes the crawl's web archive."""

from __future__ import annotations

import re
from dataclasses import dataclass

from nadird.config.checks import positive

# A file name prefix must not leave the directory or need quoting.
_PREFIX = re.compile(r"[A-Za-z0-9._-]{1,100}")


@dataclass(frozen=True)
class WarcConfig:
    """Every fetch written as WARC/1.1 records (docs/operations/archives.md)."""

    dir: str
    # A file is closed, and a new one started, once it holds this many bytes.
    max_size: int = 1_000_000_000
    prefix: str = "nadird"
    # Said in each file's warcinfo record (what this crawl is for).
    description: str = ""
    # Bytes of each response body archived; longer ones are cut (WARC-Truncated).
    max_body_bytes: int = 10 * 1024 * 1024
    # A page whose exchange could not be archived (a full disk) is not stored
    # either: it is crawled again once the archive takes writes.
    required: bool = False
    # gzip level of each record: 1 costs about a third of 6's CPU for files
    # a quarter larger; 9 (warcio's own) nearly twice 6's for 1 % smaller.
    gzip_level: int = 6

    def __post_init__(self) -> None:
        if not self.dir:
            raise ValueError("dir: a directory for the WARC files")
        positive(self, "max_size", "max_body_bytes")
        if not 1 <= self.gzip_level <= 9:
            raise ValueError("gzip_level must be 1 to 9")
        if not _PREFIX.fullmatch(self.prefix) or self.prefix.startswith("."):
            raise ValueError("prefix: letters, digits, '.', '_' or '-' (not first '.')")
        if len(self.description) > 10_000:
            raise ValueError("description: at most 10000 characters")
