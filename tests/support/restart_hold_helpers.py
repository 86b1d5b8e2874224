"""The lease period of the restart hold tests."""

from __future__ import annotations

TTL = 3.0
