"""Content decoding never holds more than one piece beyond the limit."""

from __future__ import annotations

import gzip
import zlib

import pytest

from nadird.common.errors import ErrorKind, FetchError
from nadird.worker.fetch import decoding
from nadird.worker.fetch.decoding import STEP, decoder_for, gunzip_limited


def chunks(data: bytes, size: int = 65536) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def decode_all(coding: str, data: bytes, limit: int) -> bytes:
    decoder = decoder_for(coding)
    out: list[bytes] = []
    size = 0
    for chunk in chunks(data):
        for piece in decoder.feed(chunk):
            assert len(piece) <= STEP
            size += len(piece)
            if size > limit:
                raise FetchError(ErrorKind.TOO_LARGE, "limit")
            out.append(piece)
    out.extend(decoder.finish())
    return b"".join(out)


TEXT = b"<html>" + b"hello world " * 5000 + b"</html>"


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send
        ("identity", lambda b: b),
        ("", lambda b: b),
    ],
)
def test_round_trip(coding: str, encode: object) -> None:
    assert decode_all(coding, encode(TEXT), 10**7) == TEXT  # type: ignore[operator]


def test_multi_member_gzip() -> None:
    assert decode_all("gzip", gzip.compress(b"a" * 10) + gzip.compress(b"b" * 10), 100) == (
        b"a" * 10 + b"b" * 10
    )


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
def test_a_bomb_stops_at_the_limit_piece_by_piece(coding: str) -> None:
    zeros = bytes(64 * 1024 * 1024)
    if coding == "br":
        brotli = pytest.importorskip("brotli")
        bomb = brotli.compress(zeros, quality=5)
    elif coding == "gzip":
        bomb = gzip.compress(zeros, 9)
    else:
        bomb = zlib.compress(zeros, 9)
    assert len(bomb) < 100_000
    decoder = decoder_for(coding)
    produced = 0
    with pytest.raises(FetchError):
        for chunk in chunks(bomb, 1024):
            for piece in decoder.feed(chunk):
                # Never a 64 MiB bytes object at once (brotli's limit is a
                # soft one: its buffer stops growing once past it).
                assert len(piece) <= 2 * STEP
                produced += len(piece)
                if produced > 1024 * 1024:
                    raise FetchError(ErrorKind.TOO_LARGE, "stop")
    assert produced <= 1024 * 1024 + 2 * STEP


def test_bad_data_and_unknown_codings_are_fetch_errors() -> None:
    with pytest.raises(FetchError) as caught:
        list(decoder_for("gzip").feed(b"\x1f\x8bnot gzip at all"))
    assert caught.value.kind == "content_encoding"
    with pytest.raises(FetchError) as caught:
        decoder_for("compress")
    assert caught.value.kind == "content_encoding"


def test_gunzip_limited_refuses_past_the_limit() -> None:
    assert gunzip_limited(gzip.compress(b"x" * 100), 100) == b"x" * 100
    with pytest.raises(FetchError) as caught:
        gunzip_limited(gzip.compress(bytes(10 * 1024 * 1024)), 1024 * 1024)
    assert caught.value.kind == "too_large"


def test_br_is_only_advertised_when_it_can_be_bounded() -> None:
    assert ("br" in decoding.accept_encoding()) == decoding.HAVE_BROTLI
