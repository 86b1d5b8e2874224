"""The language of a page: detected from its text when that is long enough
to tell, else what the page declares.

Pages often declare a language wrongly (a template's lang="en" on every
page of a multilingual site), so a confident detection wins. py3langid (the
langid.py model, numpy only, BSD) answers in ~1 ms on the 1,000 characters
it is given; its ISO 639-1 code is compared with the declaration's primary
subtag.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import lxml.html

# Shorter text gives unreliable answers (titles, captions, a login box).
MIN_CHARS = 200
# The probability (normalized) a detection needs to overrule a declaration.
CONFIDENT = 0.9
# Enough text to tell the language; more only costs time (py3langid was
# right on every text of scripts/bench_language.py from 300 characters on,
# and takes ~2 ms on 5,000).
SAMPLE_CHARS = 1000


@cache
def _identifier() -> Any:
    # Imported and loaded once per process (0.7 s, numpy and the model), on
    # the first page that needs it rather than in every process that starts.
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def load_model() -> None:
    """Load the model now (once per process), outside any page's budget."""
    _identifier()


def declared_language(doc: lxml.html.HtmlElement) -> str | None:
    """The primary subtag of <html lang>, or of a Content-Language meta tag."""
    value = doc.get("lang") or doc.get("xml:lang") or ""
    if not value:
        for meta in doc.iter("meta"):
            if (meta.get("http-equiv") or "").strip().lower() == "content-language":
                value = meta.get("content") or ""
                break
    primary = value.strip().replace("_", "-").split("-")[0].split(",")[0].strip().lower()
    return primary if primary.isalpha() and 2 <= len(primary) <= 3 else None


def detected_language(text: str) -> tuple[str | None, float]:
    """(ISO 639-1 code, probability) of the text; (None, 0) for too little text."""
    if len(text) < MIN_CHARS:
        return None, 0.0
    code, probability = _identifier().classify(text[:SAMPLE_CHARS])
    return str(code), float(probability)


def page_language(doc: lxml.html.HtmlElement, text: str) -> str | None:
    detected, probability = detected_language(text)
    if detected is not None and probability >= CONFIDENT:
        return detected
    return declared_language(doc) or detected
