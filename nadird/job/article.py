"""`article:` on a job: the generic fields of an article, with no rule written.

`article: true` takes the defaults; a mapping sets them. The fields and how
they are found are the worker's (worker/parse/article/); what a job may
tune lives here, because the job travels to the workers in every bag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The generic fields, in the order an item shows them.
ARTICLE_FIELDS = (
    "kind",
    "title",
    "text",
    "markdown",
    "authors",
    "published",
    "modified",
    "description",
    "image",
    "site_name",
    "categories",
    "tags",
    "language",
)

# What an item says of its article fields, for the master to count: why the
# extraction was given up (worker/parse/article/fields.py REASONS), and which
# of the job's fields took their generic step's value (`{article: NAME}`).
ARTICLE_ERROR = "_article"
FALLBACK = "_fallback"


@dataclass(frozen=True)
class ArticleSpec:
    """How the article fields are extracted.

    `budget` is the CPU time (seconds) one page's extraction may take: a
    page over it is given up, its fields left empty and the reason kept in
    the item (`_article`). `max_html_chars` gives up before starting on a
    page whose HTML is longer (no article is; a generated page can be).
    `images` keeps the content's images in the markdown, at some cost to
    the text's precision.
    """

    # CPU seconds one page's extraction may take; over it, the page's article
    # fields stay empty and `_article` says over_budget.
    budget: float = 2.0
    # A page whose HTML is longer is refused before any work (too_large).
    max_html_chars: int = 5_000_000
    # Keep the content's images in `markdown`. Off by default: the engine then
    # also lets captions and image teasers into `text` (docs/BENCHMARKS.md).
    images: bool = False

    def __post_init__(self) -> None:
        if not self.budget > 0:
            raise ValueError("budget: must be > 0 (seconds)")
        if self.max_html_chars <= 0:
            raise ValueError("max_html_chars: must be > 0")


def article_spec(value: bool | ArticleSpec | dict[str, Any]) -> ArticleSpec | None:
    """The spec of a job's `article:` value (its wire form included); None when off."""
    if isinstance(value, ArticleSpec):
        return value
    if isinstance(value, dict):
        return ArticleSpec(**value)
    return ArticleSpec() if value else None
