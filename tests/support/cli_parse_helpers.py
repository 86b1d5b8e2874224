"""Seed URLs the command-line tests type."""

from __future__ import annotations

SEED_A, SEED_B = "http://a.test/", "http://b.test/x"
