"""The generic step at the end of a field's selectors: `{article: NAME}`.

A site's rules are written for the layout it had; when it changes, every
selector of a field may find nothing. A field whose list ends with
`{article: text}` (or another article field) then takes the generic
extraction's value instead of staying empty, and the item says which fields
did (`_fallback`), so the master counts them per job and field
(`nadird_fallback_extractions`) and an operator sees the layout change.

The generic extraction costs far more than a selector, so it runs at most
once per page, and only when a field reaches its generic step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nadird.job.article import ARTICLE_ERROR, FALLBACK


class GenericStep:
    """One page's article fields, extracted when first asked for."""

    def __init__(self, extract: Callable[[], dict[str, Any]]) -> None:
        self._extract = extract
        self._found: dict[str, Any] | None = None
        self.used: list[str] = []  # fields that took a generic value, in order

    def fields(self) -> dict[str, Any]:
        """Every article field of the page (extracted now if not yet)."""
        if self._found is None:
            self._found = self._extract()
        return self._found

    def value(self, field: str, article_field: str, present: Callable[[Any], bool]) -> Any:
        """`article_field` of the page for the job's `field`; remembered as
        used when it holds a value."""
        value = self.fields().get(article_field)
        if present(value):
            self.used.append(field)
            return value
        return None

    def marks(self) -> dict[str, Any]:
        """What the item says of the step: the fields that took it, and why
        the extraction was given up when it was (only when it ran)."""
        marks: dict[str, Any] = {}
        if self.used:
            marks[FALLBACK] = list(self.used)
        reason = None if self._found is None else self._found.get(ARTICLE_ERROR)
        if reason is not None:
            marks[ARTICLE_ERROR] = reason
        return marks
