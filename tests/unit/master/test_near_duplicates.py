"""Near-duplicate fingerprints and the master's index of them: copies
match, different stories do not, the index answers per job, survives a
restart, and the master marks or drops the records it stores."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.articles.wire import COPIES, OTHER, WIRE

from nadird.common.simhash import BANDS, NEAR_BITS, bands, distance, text_simhash
from nadird.items.processors import Context
from nadird.job.spec import Job
from nadird.master.results.near_dups import NearDuplicates
from nadird.master.state.frontier_db import FrontierDB
from nadird.store.base import PageRecord
from nadird.worker.parse.item import extract_item, item_simhash
from nadird.worker.parse.parser import parse_text

JOB = Job(name="news", article=True)


def print_of(path: str, job: Job = JOB) -> int | None:
    url = "https://wire.test" + path
    html = COPIES[path]
    data = extract_item(parse_text(html, url), html, job, (), Context(url, time.time()))[1]
    return item_simhash(job, data)


def test_copies_are_near_and_another_story_is_far() -> None:
    prints = {path: print_of(path) for path in COPIES}
    first = prints[WIRE + "ledger/tunnel"]
    assert first is not None
    for path, found in prints.items():
        assert found is not None
        assert (distance(first, found) <= NEAR_BITS) == (path != OTHER), path
    assert distance(first, prints[OTHER] or 0) > 4 * NEAR_BITS


def test_short_texts_and_jobs_without_near_duplicates_get_no_fingerprint() -> None:
    assert text_simhash("Too short to tell a copy from a template.") is None
    assert print_of(WIRE + "ledger/tunnel", Job(article=True, near_duplicates="keep")) is None
    assert print_of(WIRE + "ledger/tunnel", Job(fields={})) is None


def test_fingerprints_are_signed_64_bit_and_cjk_text_is_read_by_character() -> None:
    chinese = "港口隧道在维修两年后于周六早上重新开放，维修比计划晚了一年，费用几乎是预算的两倍。"
    found = text_simhash(chinese * 3)
    assert found is not None and -(2**63) <= found < 2**63
    edited = text_simhash(chinese * 3 + "记者报道。")
    assert edited is not None and distance(found, edited) <= NEAR_BITS
    assert len(bands(found)) == BANDS


def record(url: str, fingerprint: int | None, job: str = "news") -> PageRecord:
    return PageRecord(
        url=url, fp=b"f" * 16, final_url=url, status=200, fetched_at=0.0, job=job, depth=0,
        data={"text": "t"}, simhash=fingerprint,
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["mark", "drop"])
def test_the_master_marks_copies_per_job_and_remembers_across_a_restart(
    tmp_path: Path, mode: str
) -> None:
    story, near, other = 0x0123_4567_89AB_CDEF, 0x0123_4567_89AB_CDEF ^ 0b1011, -5
    jobs = {"news": Job(name="news", article=True, near_duplicates=mode)}  # type: ignore[arg-type]
    db = FrontierDB(tmp_path / "frontier.db")
    dups = NearDuplicates(db.near_dups, jobs.get)
    checked = dups.check(
        [
            record("https://a.test/1", story),
            record("https://b.test/1", near),
            record("https://c.test/1", other),
            record("https://d.test/1", near, job="blogs"),  # another job: its own index
            record("https://a.test/1", story),  # the first one fetched again
            record("https://e.test/1", None),  # no text to compare
        ]
    )
    first = "https://a.test/1"
    assert [r.near_duplicate_of for r in checked] == [None, first, None, None, None, None]
    assert bool(checked[1].data) == (mode == "mark")
    action = "marked" if mode == "mark" else "dropped"
    assert dups.counted == {("news", action): 1}
    assert db.close()
    again = FrontierDB(tmp_path / "frontier.db")
    later = NearDuplicates(again.near_dups, jobs.get).check([record("https://f.test/1", near)])
    assert later[0].near_duplicate_of == "https://a.test/1"
    assert again.near_dups.texts() == 3  # the first of each text, per job
    again.close()


def test_drop_needs_an_article_job() -> None:
    with pytest.raises(ValueError, match="near_duplicates: drop needs article:"):
        Job(near_duplicates="drop")


def test_an_index_of_the_former_layout_is_converted_and_answers_the_same(tmp_path: Path) -> None:
    """A frontier.db written with a row per fingerprint and band (the layout
    before buckets) is converted when opened, and finds the same firsts."""
    import sqlite3

    from nadird.master.state.neardup_db import _JOB_SHIFT

    story, near, other = 0x0123_4567_89AB_CDEF, 0x0123_4567_89AB_CDEF ^ 0b1011, -5
    path = tmp_path / "frontier.db"
    FrontierDB(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE near_dup_buckets")
        conn.execute(
            "CREATE TABLE near_dup_bands (band INTEGER NOT NULL, simhash INTEGER NOT NULL,"
            " text INTEGER NOT NULL, PRIMARY KEY (band, simhash, text)) WITHOUT ROWID"
        )
        conn.execute("INSERT INTO near_dup_jobs (id, name) VALUES (1, 'news')")
        for text, (url, fingerprint) in enumerate(
            [("https://a.test/1", story), ("https://c.test/1", other)], 1
        ):
            conn.execute("INSERT INTO near_dup_texts (id, url) VALUES (?, ?)", (text, url))
            conn.executemany(
                "INSERT INTO near_dup_bands VALUES (?, ?, ?)",
                [((1 << _JOB_SHIFT) | band, fingerprint, text) for band in bands(fingerprint)],
            )
    db = FrontierDB(path)
    assert db.near_dups.first_of("news", near, "https://b.test/1", NEAR_BITS) == "https://a.test/1"
    assert db.near_dups.first_of("news", other, "https://d.test/1", NEAR_BITS) == "https://c.test/1"
    assert db.near_dups.first_of("blogs", near, "https://e.test/1", NEAR_BITS) is None
    assert db.near_dups.texts() == 3
    assert db.close()
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "near_dup_bands" not in tables and "near_dup_buckets" in tables


def test_a_bucket_grows_in_chunks_of_one_page_and_every_chunk_is_searched(tmp_path: Path) -> None:
    """600 texts sharing their first band (a bucket of 600 entries): each
    chunk holds at most CHUNK_ENTRIES, and a copy of the first, of one in
    the middle and of the last is found."""
    import random
    import sqlite3

    from nadird.master.state.neardup_db import CHUNK_ENTRIES, ENTRY_BYTES

    rnd = random.Random(3)
    prints: list[int] = []
    while len(prints) < 600:  # different texts: no two within NEAR_BITS
        candidate = ((rnd.getrandbits(48) << 16) | 0x1234) - (1 << 63)
        if all(distance(candidate, p) > NEAR_BITS + 1 for p in prints):
            prints.append(candidate)
    db = FrontierDB(tmp_path / "frontier.db")
    for i, fingerprint in enumerate(prints):
        assert db.near_dups.first_of("news", fingerprint, f"https://a.test/{i}", NEAR_BITS) is None
    for i in (0, 300, 599):
        copy = prints[i] ^ (1 << 40)  # one bit off in another band
        found = db.near_dups.first_of("news", copy, "https://copy.test/", NEAR_BITS)
        assert found == f"https://a.test/{i}"
    assert db.close()
    with sqlite3.connect(tmp_path / "frontier.db") as conn:
        sizes = [n for (n,) in conn.execute("SELECT length(entries) FROM near_dup_buckets")]
    assert max(sizes) == CHUNK_ENTRIES * ENTRY_BYTES  # full chunks, none larger
    assert sum(sizes) == 4 * 600 * ENTRY_BYTES
