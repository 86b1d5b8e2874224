"""The robots notes the master keeps, read back for one host."""

from __future__ import annotations

from pathlib import Path


def test_robots_notes_of_one_host_any_scheme_or_port(tmp_path: Path) -> None:
    from nadird.master.leasing.robots_notes import RobotsNotes
    from nadird.protocol.messages import RobotsNote

    notes = RobotsNotes(tmp_path / "robots.db")
    try:
        notes.remember(
            [
                RobotsNote("http://a.test", True, "", 5.0),
                RobotsNote("https://a.test:8443", False, "User-agent: *\nDisallow: /x", 0.0),
                RobotsNote("http://a.test.evil", True, "", 0.0),  # in the range, not the host
                RobotsNote("http://www.a.test", True, "", 0.0),
                RobotsNote("http://b.test", True, "", 0.0),
            ]
        )
        found = notes.for_host("a.test")
    finally:
        notes.close()
    assert [(origin, allow) for origin, allow, _ in found] == [
        ("http://a.test", True),
        ("https://a.test:8443", False),
    ]
    assert 4.0 < found[0][2] < 60.0  # its age, from when it was fetched
