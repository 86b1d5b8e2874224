"""The near-duplicate fingerprint of an article's text, and its bands.

A 64-bit SimHash (Charikar) over word pairs: every pair of neighbouring
words (every pair of neighbouring characters in Chinese and Japanese, which
write no spaces) is hashed, and each bit of the fingerprint is the majority
of that bit over the pairs. Two texts that share most of their pairs (the
same wire story with another byline, the same post with another footer)
get fingerprints a few bits apart; different stories, even on one subject
in one vocabulary, dozens of bits. Pairs rather than single words: single
words put unrelated pages of one vocabulary (a manual's pages) within a
few bits of each other (docs/BENCHMARKS.md, "Near-duplicates").

Two fingerprints at most NEAR_BITS apart are near-identical texts. The
index (master/state/neardup_db.py) finds them through BANDS exact 16-bit
bands: any two fingerprints at most BANDS - 1 bits apart share a band; of
those further apart, up to NEAR_BITS, a share that falls with the distance
(docs/BENCHMARKS.md, "Near-duplicates", has what that means for real edits).

Fingerprints are signed 64-bit integers, as SQLite and MongoDB keep them.
"""

from __future__ import annotations

import hashlib
import itertools
import re

BITS = 64
BANDS = 4
BAND_BITS = BITS // BANDS
NEAR_BITS = 7  # at most this many bits apart: near-identical
# Texts with fewer word pairs are too short to tell a copy from a template.
MIN_PAIRS = 30
_SIGN = 1 << (BITS - 1)
_WIDE = 1 << BITS
_BAND_MASK = (1 << BAND_BITS) - 1
# Scripts written without spaces: each character is a word of its own.
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(f"[{_UNSPACED}]|[^\\W_{_UNSPACED}]+")


def _digests(text: str) -> bytes:
    """The 8-byte hashes of the text's word pairs, end to end (one bytes
    object for numpy to read: a Python int per pair cost a fifth of the time)."""
    words = _WORD.findall(text.lower())
    blake2b = hashlib.blake2b
    return b"".join(
        [blake2b(f"{a} {b}".encode(), digest_size=8).digest() for a, b in itertools.pairwise(words)]
    )


def text_simhash(text: str) -> int | None:
    """The text's fingerprint; None for a text too short to compare."""
    digests = _digests(text)
    pairs = len(digests) // 8
    if pairs < MIN_PAIRS:
        return None
    # Here, not at the top: a master imports this module for its constants,
    # and needs numpy only once an article job sends fingerprints.
    import numpy as np

    each = np.frombuffer(digests, dtype=np.uint8).reshape(-1, 8)
    bits = np.unpackbits(each, axis=1, bitorder="little")  # bit i of a hash: column i
    majority = bits.sum(axis=0, dtype=np.int64) * 2 > pairs
    value = int.from_bytes(np.packbits(majority, bitorder="little").tobytes(), "little")
    return value - _WIDE if value & _SIGN else value


def distance(a: int, b: int) -> int:
    """How many bits two fingerprints differ in."""
    return ((a ^ b) & (_WIDE - 1)).bit_count()


def bands(fingerprint: int) -> list[int]:
    """The fingerprint's BANDS bands, each numbered: (band << 16) | its 16 bits."""
    return [
        (band << BAND_BITS) | ((fingerprint >> (band * BAND_BITS)) & _BAND_MASK)
        for band in range(BANDS)
    ]
