"""Which endpoints count as private for the mesh."""

from __future__ import annotations

import pytest

from nadird.protocol.curve import is_private_endpoint


@pytest.mark.parametrize(
    ("endpoint", "private"),
    [
        ("ipc:///tmp/x", True),
        ("tcp://127.0.0.1:5550", True),
        ("tcp://[::1]:5550", True),
        ("tcp://localhost:1", True),
        ("tcp://*:5550", False),
        ("tcp://0.0.0.0:5550", False),
        ("tcp://10.1.2.3:5550", False),
        ("tcp://eth0:5550", False),
    ],
)
def test_endpoint_privacy(endpoint: str, private: bool) -> None:
    assert is_private_endpoint(endpoint) is private
