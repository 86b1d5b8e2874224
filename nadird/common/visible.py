"""Unicode's bidirectional controls, shown instead of obeyed.

Text from a page or a peer that holds an embedding, override or isolate
(U+202A-202E, U+2066-2069) reorders whatever is printed after it: an old
value read as the new one. The console and the alerts write each as its
escape (`\\u202e`) instead.
"""

from __future__ import annotations

import re

BIDI = "\u202a-\u202e\u2066-\u2069"  # a regex character range, for wider sets
BIDI_CONTROLS = re.compile(f"[{BIDI}]")


def as_escape(match: re.Match[str]) -> str:
    """The matched character written as its escape (`\\u202e`)."""
    return f"\\u{ord(match.group()):04x}"


def visible_bidi(text: str) -> str:
    """`text` with each bidi control written as its escape."""
    return BIDI_CONTROLS.sub(as_escape, text)
