import contextlib

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nadird.common.errors import ProtocolError
from nadird.protocol.codec import decode, encode
from nadird.protocol.messages import (
    Bag,
    BagDone,
    Bye,
    Credit,
    Heartbeat,
    Hello,
    PageResult,
    Results,
    Shutdown,
    Welcome,
)
from nadird.testing.fuzz import values

FP = b"\x01" * 16
SAMPLES = [
    Hello(node="w1", capacity=4, group="g", capabilities=["html"], pid=7, version="0.1"),
    Welcome(node="w1", heartbeat_interval=1.0, lease_ttl=5.0),
    Credit(node="w1", bags=3),
    Heartbeat(node="w1", leases=["a-1"], inflight=1),
    Bag(
        lease="a-1",
        epoch=2,
        domain="a.test",
        job={"name": "default"},
        urls=["http://a.test/"],
        fps=[FP],
        depths=[0],
        delay=0.5,
        domain_concurrency=1,
        ttl=5.0,
    ),
    BagDone(node="w1", lease="a-1", epoch=2, returned=[FP], wait=0.3),
    Bye(node="w1"),
    Shutdown(reason="done", done=True),
    Results(
        node="w1",
        lease="a-1",
        epoch=2,
        job="default",
        pages=[
            PageResult(
                url="http://a.test/",
                fp=FP,
                final_url="http://a.test/",
                status=200,
                fetched_at=1.5,
                depth=0,
                content_type="text/html",
                data={"t": "x", "l": ["a"], "n": None},
                body=b"<html>",
                links=["http://a.test/b"],
                link_fps=[FP],
            )
        ],
    ),
]


@pytest.mark.parametrize("msg", SAMPLES, ids=lambda m: m.KIND)
def test_every_message_round_trips(msg: object) -> None:
    assert decode(encode(msg)) == msg  # type: ignore[arg-type]


def test_frames_are_versioned_maps_with_named_fields() -> None:
    body = msgpack.unpackb(encode(Credit(node="w1", bags=3)))
    assert body == {"v": 1, "k": "credit", "node": "w1", "bags": 3}


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"v": 1, "k": "nope"}, "unknown message kind"),
        ({"v": 2, "k": "bye", "node": "w"}, "version"),
        ({"k": "bye", "node": "w"}, "version"),
        ({"v": 1, "k": "bye"}, "node"),
        ({"v": 1, "k": "bye", "node": 5}, "expected str"),
        ({"v": 1, "k": "bye", "node": "w", "extra": 1}, "unknown key"),
        ({"v": 1, "k": "credit", "node": "w", "bags": True}, "expected int"),
        (
            {"v": 1, "k": "bag_done", "node": "w", "lease": "l", "epoch": 1, "returned": [b"x"]},
            "16 bytes",
        ),
        ([1, 2, 3], "not a map"),
    ],
)
def test_bad_messages_are_refused_with_a_reason(body: object, reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        decode(msgpack.packb(body, use_bin_type=True))


def test_mismatched_side_by_side_lists_are_refused() -> None:
    body = msgpack.unpackb(encode(SAMPLES[4]))
    body["fps"] = []
    with pytest.raises(ProtocolError, match="same length"):
        decode(msgpack.packb(body, use_bin_type=True))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_random_frames_only_ever_raise_protocol_error(frame: bytes) -> None:
    with contextlib.suppress(ProtocolError):
        decode(frame)


@settings(max_examples=200, deadline=None)
@given(values, st.sampled_from([s.KIND for s in SAMPLES]))
def test_random_bodies_of_real_kinds_only_raise_protocol_error(body: object, kind: str) -> None:
    frame = msgpack.packb(
        {"v": 1, "k": kind, "x": body}
        if not isinstance(body, dict)
        else {**body, "v": 1, "k": kind},
        use_bin_type=True,
    )
    with contextlib.suppress(ProtocolError):
        decode(frame)
