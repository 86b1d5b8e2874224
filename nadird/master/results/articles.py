"""What the items of article jobs say, counted per job.

A worker marks in the item (job/article.py) the fields that took their
generic step's value (`_fallback`) and why the article extraction was given
up (`_article`); counted here per (job, field) and (job, reason), for
/metrics (`nadird_fallback_extractions`, `nadird_article_given_up`) and
/api/stats. A counter bump per page that has them, no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from nadird.job.article import ARTICLE_ERROR, FALLBACK


class ArticleTallies:
    def __init__(self) -> None:
        self.fallbacks: Counter[tuple[str, str]] = Counter()  # (job, field) -> pages
        self.given_up: Counter[tuple[str, str]] = Counter()  # (job, reason) -> pages

    def observe(self, data: Mapping[str, Any], job: str) -> None:
        if not data:
            return
        reason = data.get(ARTICLE_ERROR)
        if isinstance(reason, str):
            self.given_up[job, reason] += 1
        fields = data.get(FALLBACK)
        if isinstance(fields, list):
            self.fallbacks.update((job, str(name)) for name in fields)
