"""Frames built to hurt the decoder: deep nesting, oversized lists, and the
memory that refused frames must give back."""

from __future__ import annotations

import tracemalloc

import msgpack
import pytest

from nadird.common.errors import ProtocolError
from nadird.protocol.codec import MAX_DEPTH, decode, encode
from nadird.protocol.limits import MAX_PAGES
from nadird.protocol.messages import PageResult, Results
from nadird.testing.bad_frames import CONTROL_KINDS, deep_frame, nested, page, too_many_pages


@pytest.mark.parametrize("kind", [*CONTROL_KINDS, "results"])
@pytest.mark.parametrize("field", ["node", "leases", "pages", "unknown"])
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 200, 1000, 1020])
def test_a_deeply_nested_frame_is_refused_not_recursed(kind: str, field: str, depth: int) -> None:
    frame = deep_frame(kind, field, depth)
    assert len(frame) < 1100  # ~1 KB is all it takes
    with pytest.raises(ProtocolError, match=f"nested deeper than {MAX_DEPTH} levels"):
        decode(frame)


@pytest.mark.parametrize("where", ["v", "k"])
def test_a_deep_version_or_kind_is_named_by_its_type(where: str) -> None:
    body = {"v": 1, "k": "hello", where: nested(1000)}
    with pytest.raises(ProtocolError, match=r"list$"):
        decode(msgpack.packb(body))


def test_page_data_may_nest_but_not_without_bound() -> None:
    def results(data: object) -> bytes:
        body = {"v": 1, "k": "results", "node": "w1", "lease": "l", "epoch": 1, "job": "j"}
        return msgpack.packb({**body, "pages": [{**page(1), "data": {"f": data}}]})

    kept = decode(results(nested(10)))
    assert isinstance(kept, Results) and kept.pages[0].data == {"f": nested(10)}
    with pytest.raises(ProtocolError, match="nested deeper"):
        decode(results(nested(900)))


def test_too_many_pages_are_refused_from_the_array_header() -> None:
    whole = too_many_pages()
    # Only the head of the frame is read: cut after the array header, the
    # frame is refused for its page count, not as broken msgpack.
    cut = whole[: whole.index(b"pages") + 5 + 3]
    for frame in (whole, cut):
        with pytest.raises(ProtocolError, match=f"pages: {MAX_PAGES + 1} entries"):
            decode(frame)


def test_pages_hidden_past_the_head_are_still_refused() -> None:
    with pytest.raises(ProtocolError, match=f"pages: more than {MAX_PAGES}"):
        decode(too_many_pages(hidden=True))


# A leak keeps every message: 10 rounds of these keep several MB. The free
# lists of a healthy run hold a few hundred KB, depending on collections.
MB = 1024 * 1024


def _grown_by(work: object, rounds: int) -> int:
    """Bytes still allocated after running `work` `rounds` times, after as
    many to warm up: the interpreter's free lists (tuples, dicts) fill to a
    bound, and only a full collection empties them, so growth is measured
    past that bound, where a leak keeps growing and a free list does not."""
    assert callable(work)
    for _ in range(rounds):
        work()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(rounds):
            work()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before


def test_refused_frames_leave_nothing_behind() -> None:
    # Each is ~700 KB and builds ~4 MB of objects before it is refused; they
    # were once all kept (a shared exception's traceback grew with each).
    def refuse() -> None:
        with pytest.raises(ProtocolError):
            decode(too_many_pages(hidden=True))

    assert _grown_by(refuse, 10) < MB


def test_messages_taking_the_slow_path_leave_nothing_behind() -> None:
    # An int where a float is declared: the fast path gives up, build() converts.
    body = msgpack.unpackb(encode(_results(300)))
    for entry in body["pages"]:
        entry["fetched_at"] = 1
    frame = msgpack.packb(body)

    def accept() -> None:
        assert decode(frame).KIND == "results"

    assert _grown_by(accept, 10) < MB


def _results(pages: int) -> Results:
    return Results(
        node="w1",
        lease="l",
        epoch=1,
        job="default",
        pages=[
            PageResult(
                url=f"http://a.test/{i}",
                fp=i.to_bytes(16, "big"),
                final_url=f"http://a.test/{i}",
                status=200,
                fetched_at=1.0,
                depth=1,
            )
            for i in range(pages)
        ],
    )


@pytest.mark.parametrize("field", ["etag", "last_modified", "signature"])
def test_a_validator_no_bag_could_carry_back_is_refused(field: str) -> None:
    """The revisit schedule keeps these and sends them back in bags, which
    refuse more than MAX_VALIDATOR characters: a result may not store more."""
    from nadird.protocol.limits import MAX_VALIDATOR

    url = "http://a.test/"
    fits = PageResult(url, b"0" * 16, url, 200, 1.0, 0, **{field: "v" * MAX_VALIDATOR})
    frame = msgpack.unpackb(encode(Results("n", "l", 1, "j", [fits])), raw=False)
    assert decode(msgpack.packb(frame)) is not None
    frame["pages"][0][field] = "v" * (MAX_VALIDATOR + 1)
    with pytest.raises(ProtocolError, match=field):
        decode(msgpack.packb(frame))
