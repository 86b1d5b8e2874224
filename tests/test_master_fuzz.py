"""Property tests: the master's state machine never fails on any message."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nadird.errors import ProtocolError
from nadird.protocol.codec import decode
from nadird.protocol.messages import Message
from nadird.testing.fuzz import frames, messages, run_script


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([b"a", b"b", b"c"]), messages), max_size=25))
def test_any_sequence_of_messages_keeps_the_master_consistent(
    script: list[tuple[bytes, Message]],
) -> None:
    run_script(script)


@settings(max_examples=400, deadline=None)
@given(frames)
def test_any_frame_either_decodes_or_is_refused(frame: bytes) -> None:
    with contextlib.suppress(ProtocolError):
        decode(frame)
