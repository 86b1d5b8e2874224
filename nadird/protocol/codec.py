"""msgpack codec: versioned maps with named fields, validated on decode.

A frame that is not msgpack, not a map, nested too deep, of another protocol
version or of an unknown kind, or whose fields do not match the message type,
raises ProtocolError; the caller drops it and counts it.
"""

from __future__ import annotations

import dataclasses
import typing
from functools import cache
from typing import Any

import msgpack

from nadird.common.errors import ProtocolError
from nadird.common.record import SPARSE, default_of
from nadird.common.typecheck import Mismatch, build
from nadird.protocol.fastbuild import Builder, Slow, builder, nested_within
from nadird.protocol.limits import MAX_PAGES
from nadird.protocol.messages import MESSAGE_TYPES, Message

VERSION = 1
# Frames larger than this are refused before unpacking. The sockets also set
# ZMQ_MAXMSGSIZE (security.max_message_bytes): ZeroMQ closes the connection of
# a peer sending more, and such a frame never reaches the master.
MAX_FRAME = 64 * 1024 * 1024
MAX_STR = 1024 * 1024
MAX_ITEMS = 100_000
MAX_MAP = 10_000
# Messages nest a handful of levels (results > pages > page > data > values);
# anything deeper is hostile.
MAX_DEPTH = 32
# Top-level lists whose length alone refuses a message, read from the array
# header in the first PEEK_BYTES of the frame.
COUNTED_FIELDS = {"pages": MAX_PAGES}
PEEK_BYTES = 4096
# Bounds on every container and string: a hostile frame cannot make the
# unpacker allocate more than the frame itself justifies.
_LIMITS: dict[str, Any] = {
    "raw": False,
    "strict_map_key": True,
    "max_str_len": MAX_STR,
    "max_bin_len": MAX_FRAME,
    "max_array_len": MAX_ITEMS,
    "max_map_len": MAX_MAP,
    "max_ext_len": 0,
}


_ALWAYS = object()  # a field sent whatever it holds


@cache
def _plan(cls: type) -> tuple[tuple[str, bool, Any], ...]:
    """(field name, holds dataclasses, default) per field: only those holding
    dataclasses need a walk, the rest (URL lists, fingerprints) go to msgpack
    as they are; a sparse field (record.SPARSE) is left out while it holds
    its default (the decoder fills it in again), any other is always sent."""
    hints = typing.get_type_hints(cls)
    return tuple(
        (
            f.name,
            _holds_dataclass(hints[f.name]),
            default_of(f) if f.metadata.get(SPARSE) else _ALWAYS,
        )
        for f in dataclasses.fields(cls)
    )


def _holds_dataclass(tp: Any) -> bool:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return True
    return any(_holds_dataclass(arg) for arg in typing.get_args(tp))


def _to_plain(msg: Any) -> Any:
    if dataclasses.is_dataclass(msg) and not isinstance(msg, type):
        plain = {}
        for name, nested, default in _plan(type(msg)):
            value = getattr(msg, name)
            if default is _ALWAYS or value != default:
                plain[name] = _to_plain(value) if nested else value
        return plain
    if isinstance(msg, list):
        return [_to_plain(v) for v in msg]
    return msg


def encode(msg: Message) -> bytes:
    body = _to_plain(msg)
    body["v"] = VERSION
    body["k"] = msg.KIND
    packed: bytes = msgpack.packb(body, use_bin_type=True)
    return packed


def decode(frame: bytes | memoryview) -> Message:
    if len(frame) > MAX_FRAME:
        raise ProtocolError(f"frame of {len(frame)} bytes exceeds {MAX_FRAME}")
    _refuse_by_header(frame)
    body = _unpack(frame)
    if not isinstance(body, dict):
        raise ProtocolError("message is not a map")
    version = body.pop("v", None)
    if version != VERSION:
        raise ProtocolError(f"unsupported protocol version {_show(version)}")
    kind = body.pop("k", None)
    cls = MESSAGE_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown message kind {_show(kind)}")
    klass: Any = cls  # functools.cache wants a Hashable; a class is one
    fast = _fast_builder(klass)
    if fast is not None:
        try:
            msg: Message = fast(body)
            return msg
        except Slow:
            pass  # not exactly the declared types: convert, or say what is wrong
    if not nested_within(body, MAX_DEPTH):
        # Before the converter walks it: a recursive walk (the converter, repr
        # in its error message, a store's encoder) of a ~1,000-deep frame
        # raises RecursionError. The fast path bounds its own Any values.
        raise ProtocolError(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return build(cls, body)
    except Mismatch as exc:
        raise ProtocolError(f"{kind}: {exc}") from None


def _show(value: Any) -> str:
    """A peer's value for an error message: repr of a scalar, cut short; only
    the type of a container (its repr could be huge, or too deep to make)."""
    if isinstance(value, list | dict):
        return type(value).__name__
    return f"{value!r:.40}"


def _unpack(frame: bytes | memoryview) -> Any:
    try:
        return msgpack.unpackb(frame, **_LIMITS)
    except Exception as exc:  # msgpack raises several unrelated types
        raise ProtocolError(f"not msgpack: {type(exc).__name__}") from None


def _refuse_by_header(frame: bytes | memoryview) -> None:
    """Refuse a message whose size alone decides (more pages than a Results
    may carry) from its first bytes, before the whole frame is unpacked.

    Only the head of the frame is read: a sender's own encoder puts the small
    fields first. A frame that hides the list further on is still refused,
    after unpacking, by the message's own check.
    """
    unpacker = msgpack.Unpacker(**_LIMITS)
    unpacker.feed(frame[:PEEK_BYTES])
    try:
        for _ in range(unpacker.read_map_header()):
            key = unpacker.unpack()
            limit = COUNTED_FIELDS.get(key) if isinstance(key, str) else None
            if limit is None:
                unpacker.skip()
                continue
            count = unpacker.read_array_header()
            if count > limit:
                raise ProtocolError(f"{key}: {count} entries, more than {limit}")
            return
    except ProtocolError:
        raise
    except Exception:  # not a map, or past the head: the full unpack decides
        return


@cache
def _fast_builder(cls: type) -> Builder | None:
    try:
        return builder(cls)
    except NotImplementedError:
        return None
