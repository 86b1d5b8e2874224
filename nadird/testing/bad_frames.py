"""Frames a well-behaved peer never sends, each of which the master must drop
and count (one count per message) without stopping or keeping its memory.

Shared by the tests and the long run in scripts/fuzz_protocol.py. A message
is a list of frames: what a DEALER (control) or PUSH (results) socket sends.
Forged messages name an unregistered node, or (`live`) a live worker's node
with a lease id and session token it was never given: either way the master
drops and counts them. (tests/test_forged_results.py forges results for a
real lease.)
"""

from __future__ import annotations

from functools import cache
from typing import Any

import msgpack
from hypothesis import strategies as st

from nadird.protocol.limits import MAX_NAME, MAX_PAGES, MAX_SESSION
from nadird.protocol.messages import MESSAGE_TYPES

CONTROL_KINDS = ("hello", "credit", "heartbeat", "bag_done", "bye")
FORGED_PREFIX = "forged-"


def nested(depth: int) -> Any:
    """A list nested `depth` levels deep (built without recursion)."""
    value: Any = None
    for _ in range(depth):
        value = [value]
    return value


def pack(body: dict[str, Any]) -> bytes:
    packed: bytes = msgpack.packb({"v": 1, **body}, use_bin_type=True)
    return packed


def deep_frame(kind: str, field: str, depth: int) -> bytes:
    """About 1 KB for 1,000 levels: more than any recursive walk can take."""
    return pack({"k": kind, field: nested(depth)})


def page(index: int) -> dict[str, Any]:
    url = f"http://forged.test/{index}"
    return {
        "url": url,
        "fp": index.to_bytes(16, "big"),
        "final_url": url,
        "status": 200,
        "fetched_at": 0.0,
        "depth": 1,
        "links": [f"{url}/{i}" for i in range(8)],
        "link_fps": [(index * 8 + i).to_bytes(16, "big") for i in range(8)],
    }


@cache
def too_many_pages(hidden: bool = False) -> bytes:
    """A well-formed Results (~700 KB) with one page more than allowed.

    `hidden` repeats the pages key, a short list first: the count in the
    frame's head is within the limit, so the whole frame is unpacked and the
    message built before it is refused.
    """
    head = {"k": "results", "node": "w1", "lease": "x", "epoch": 1, "job": "default"}
    pages = msgpack.packb([page(i) for i in range(MAX_PAGES + 1)], use_bin_type=True)
    if not hidden:
        return _map_with(head, [("pages", pages)])
    short = msgpack.packb([page(0)], use_bin_type=True)
    return _map_with(head, [("pages", short), ("pages", pages)])


def _map_with(head: dict[str, Any], packed: list[tuple[str, bytes]]) -> bytes:
    """A map of `head` (plus v) and already packed values, keys repeated as given."""
    body = {"v": 1, **head}
    out = bytearray(_map_header(len(body) + len(packed)))
    for key, value in body.items():
        out += msgpack.packb(key) + msgpack.packb(value, use_bin_type=True)
    for key, raw in packed:
        out += msgpack.packb(key) + raw
    return bytes(out)


def _map_header(entries: int) -> bytes:
    return bytes([0x80 | entries]) if entries < 16 else b"\xde" + entries.to_bytes(2, "big")


def _unknown(kind: str) -> bool:
    return kind not in MESSAGE_TYPES


def _not_a_map(data: bytes) -> bool:
    try:
        return not isinstance(msgpack.unpackb(data), dict)
    except Exception:  # anything msgpack refuses is what is wanted here
        return True


_forged_names = st.text(max_size=20).map(lambda s: FORGED_PREFIX + s)
forged_leases = st.text(max_size=24)


def _forged(control: bool, live: str | None) -> st.SearchStrategy[bytes]:
    """Well-formed messages that no registered worker sent: the control ones
    come from an identity no worker registered with, the results name a lease
    no worker holds (`live`: with that worker's node name)."""
    forged_names = _forged_names | st.just(live) if live else _forged_names
    if not control:
        return st.builds(
            lambda node, lease, epoch, session, n: pack(
                {
                    "k": "results",
                    "node": node,
                    "lease": lease,
                    "epoch": epoch,
                    "job": "default",
                    "pages": [page(i) for i in range(n)],
                    "session": session,
                }
            ),
            forged_names,
            forged_leases,
            st.integers(0, 2**31),
            st.binary(max_size=MAX_SESSION),
            st.integers(0, 3),
        )
    return st.one_of(
        st.builds(
            lambda n, b: pack({"k": "credit", "node": n, "bags": b}),
            forged_names,
            st.integers(-5, 50),
        ),
        st.builds(
            lambda n, ls: pack({"k": "heartbeat", "node": n, "leases": ls}),
            forged_names,
            st.lists(forged_leases, max_size=4),
        ),
        st.builds(
            lambda n, lease: pack({"k": "bag_done", "node": n, "lease": lease, "epoch": 1}),
            forged_names,
            forged_leases,
        ),
        st.builds(lambda n: pack({"k": "bye", "node": n}), forged_names),
    )


def _malformed(control: bool) -> st.SearchStrategy[bytes]:
    kinds = st.sampled_from(CONTROL_KINDS if control else ("results", "hello", "bye"))
    fields = st.sampled_from(["node", "leases", "pages", "job", "x"])
    return st.one_of(
        st.builds(deep_frame, kinds, fields, st.integers(min_value=40, max_value=1010)),
        st.builds(lambda k: pack({"k": k}), st.text(max_size=30).filter(_unknown)),
        st.builds(
            lambda k: pack({"k": k}),
            st.integers(-(2**63), 2**63 - 1) | st.lists(st.none(), max_size=3),
        ),
        st.builds(lambda v: msgpack.packb({"v": v, "k": "hello"}), st.integers(2, 9)),
        st.binary(min_size=1, max_size=200).filter(_not_a_map),
        st.builds(
            lambda n: pack({"k": "hello", "node": "x" * n, "capacity": 1}),
            st.integers(MAX_NAME + 1, 4000),
        ),
        st.builds(too_many_pages, st.booleans()),
    )


def bad_messages(control: bool, live: str | None = None) -> st.SearchStrategy[list[bytes]]:
    """One message the master must drop, as the frames its sender sends;
    `live` is the node name of a running worker, for forgeries naming it."""
    forged = _forged(control, live)
    single = st.one_of(_malformed(control), forged).map(lambda frame: [frame])
    # On the control socket the ROUTER adds the sender's identity frame.
    wrong_count = st.lists(st.binary(max_size=40), min_size=2, max_size=4)
    return st.one_of(single, wrong_count)
