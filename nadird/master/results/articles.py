"""What the items of article jobs say, counted per job.

A worker marks in the item (job/article.py) the fields that took their
generic step's value (`_fallback`) and why the article extraction was given
up (`_article`, or a body that parsed to no document at all); counted
here per (job, field) and (job, reason), for
/metrics (`nadird_fallback_extractions`, `nadird_article_given_up`) and
/api/stats. A counter bump per page that has them, no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from nadird.common.errors import ErrorKind
from nadird.job.article import ARTICLE_ERROR, FALLBACK
from nadird.job.spec import Job
from nadird.protocol.messages import PageResult

# An article job's page whose body parsed to no document (binary served as
# HTML): the worker gives it up before any extraction, as a parse error.
UNPARSABLE = "unparsable"


class ArticleTallies:
    def __init__(self) -> None:
        self.fallbacks: Counter[tuple[str, str]] = Counter()  # (job, field) -> pages
        self.given_up: Counter[tuple[str, str]] = Counter()  # (job, reason) -> pages

    def observe(self, page: PageResult, job: str, jobs: Mapping[str, Job]) -> None:
        data = page.data
        if not data:
            if page.error_kind is ErrorKind.PARSE and getattr(jobs.get(job), "article", False):
                self.given_up[job, UNPARSABLE] += 1
            return
        reason = data.get(ARTICLE_ERROR)
        if isinstance(reason, str):
            self.given_up[job, reason] += 1
        fields = data.get(FALLBACK)
        if isinstance(fields, list):
            self.fallbacks.update((job, str(name)) for name in fields)
