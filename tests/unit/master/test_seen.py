import hashlib
from pathlib import Path

import pytest

from nadird.common.errors import StateError
from nadird.master.frontier.seen import SeenSet


def fp(i: int) -> bytes:
    return hashlib.blake2b(str(i).encode(), digest_size=16).digest()


def test_add_new_reports_only_unseen() -> None:
    s = SeenSet(1000, 0.001)
    assert s.add_new([fp(1), fp(2), fp(1)]) == [True, True, False]
    assert s.add_new([fp(2), fp(3)]) == [False, True]
    assert s.added == 3


def test_snapshot_reloads_and_answers_identically(tmp_path: Path) -> None:
    s = SeenSet(50_000, 0.01)
    s.add_new(fp(i) for i in range(20_000))
    path = tmp_path / "state" / "seen.bloom"
    s.snapshot(path)
    loaded = SeenSet.load(path)
    probes = [fp(i) for i in range(40_000)]
    assert [p in loaded for p in probes] == [p in s for p in probes]
    assert all(fp(i) in loaded for i in range(20_000))
    assert loaded.added == s.added
    assert not list(tmp_path.glob("state/*.tmp"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign"])
def test_damaged_snapshot_is_refused(tmp_path: Path, damage: str) -> None:
    s = SeenSet(1000, 0.01)
    s.add_new([fp(1)])
    path = tmp_path / "seen.bloom"
    s.snapshot(path)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[:20]
    elif damage == "flip":
        data[-1] ^= 0xFF
    else:
        data[:8] = b"SOMETHNG"
    path.write_bytes(bytes(data))
    with pytest.raises(StateError, match=r"seen\.bloom"):
        SeenSet.load(path)
