"""msgpack codec: versioned maps with named fields, validated on decode.

A frame that is not msgpack, not a map, of another protocol version or of an
unknown kind, or whose fields do not match the message type, raises
ProtocolError; the caller drops it and counts it.
"""

from __future__ import annotations

import dataclasses
import typing
from functools import cache
from typing import Any

import msgpack

from nadird.errors import ProtocolError
from nadird.protocol.fastbuild import Builder, Slow, builder
from nadird.protocol.messages import MESSAGE_TYPES, Message
from nadird.typecheck import Mismatch, build

VERSION = 1
# Frames larger than this are refused before unpacking (a later hardening
# step also sets ZMQ_MAXMSGSIZE on the sockets).
MAX_FRAME = 64 * 1024 * 1024
MAX_STR = 1024 * 1024
MAX_ITEMS = 100_000
MAX_MAP = 10_000


@cache
def _plan(cls: type) -> tuple[tuple[str, bool], ...]:
    """(field name, holds dataclasses) per field: only those need a walk, the
    rest (URL lists, fingerprints) go to msgpack as they are."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _holds_dataclass(hints[f.name])) for f in dataclasses.fields(cls))


def _holds_dataclass(tp: Any) -> bool:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return True
    return any(_holds_dataclass(arg) for arg in typing.get_args(tp))


def _to_plain(msg: Any) -> Any:
    if dataclasses.is_dataclass(msg) and not isinstance(msg, type):
        return {
            name: _to_plain(getattr(msg, name)) if nested else getattr(msg, name)
            for name, nested in _plan(type(msg))
        }
    if isinstance(msg, list):
        return [_to_plain(v) for v in msg]
    return msg


def encode(msg: Message) -> bytes:
    body = _to_plain(msg)
    body["v"] = VERSION
    body["k"] = msg.KIND
    packed: bytes = msgpack.packb(body, use_bin_type=True)
    return packed


def decode(frame: bytes) -> Message:
    if len(frame) > MAX_FRAME:
        raise ProtocolError(f"frame of {len(frame)} bytes exceeds {MAX_FRAME}")
    try:
        # Bounds on every container and string: a hostile frame cannot make
        # the unpacker allocate more than the frame itself justifies.
        body = msgpack.unpackb(
            frame,
            raw=False,
            strict_map_key=True,
            max_str_len=MAX_STR,
            max_bin_len=MAX_FRAME,
            max_array_len=MAX_ITEMS,
            max_map_len=MAX_MAP,
            max_ext_len=0,
        )
    except Exception as exc:  # msgpack raises several unrelated types
        raise ProtocolError(f"not msgpack: {type(exc).__name__}") from None
    if not isinstance(body, dict):
        raise ProtocolError("message is not a map")
    version = body.pop("v", None)
    if version != VERSION:
        raise ProtocolError(f"unsupported protocol version {version!r}")
    kind = body.pop("k", None)
    cls = MESSAGE_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown message kind {kind!r:.40}")
    klass: Any = cls  # functools.cache wants a Hashable; a class is one
    fast = _fast_builder(klass)
    if fast is not None:
        try:
            msg: Message = fast(body)
            return msg
        except Slow:
            pass  # not exactly the declared types: convert, or say what is wrong
    try:
        return build(cls, body)
    except Mismatch as exc:
        raise ProtocolError(f"{kind}: {exc}") from None


@cache
def _fast_builder(cls: type) -> Builder | None:
    try:
        return builder(cls)
    except NotImplementedError:
        return None
