"""Property tests: the master's state machine never fails on any message."""

from __future__ import annotations

import contextlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nadird.common.errors import ProtocolError
from nadird.protocol.codec import decode
from nadird.protocol.messages import Credit, Hello, Message, PageResult, Results
from nadird.testing.fuzz import LIVE, feed, frames, fresh_core, messages, run_script


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


def test_results_for_the_live_lease_are_accepted_so_the_fuzz_reaches_that_path(
    tmp_path: Path,
) -> None:
    core = fresh_core(tmp_path)
    page = PageResult(url="x", fp=b"\x00" * 16, final_url="x", status=200, fetched_at=0, depth=0)
    script: list[Message] = [
        Hello(node="w1", capacity=2),
        Credit(node="w1", bags=2),
        Results(node="?", lease=LIVE, epoch=0, job="default", pages=[page, page]),
    ]
    for step, msg in enumerate(script):
        feed(core, b"a", msg, 100.0 + step)
    assert core.stats["pages_ok"] == 2 and core.stats["dropped_messages"] == 0
    core.frontier.db.close()
