"""Near-duplicate articles end to end: a crawl over a story syndicated
across sites marks every copy with the first URL seen with its text (store
and export), `near_duplicates: drop` stores the copies without their items,
`keep` leaves them alone, and `nadird reextract` fingerprints pages stored
without fingerprints and marks their copies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.articles.wire import COPIES, OTHER, WIRE, wire_route
from support.reextract_helpers import reextract, summary_of
from test_crawl_command import crawl, records, summary

from nadird.common.simhash import NEAR_BITS, distance
from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def crawl_wire(
    tmp_path: Path, job: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], Path, Path]:
    """(the summary, the stored records by path, the JSON lines export, the store)."""
    config = tmp_path / "wire.yaml"
    config.write_text(json.dumps({"jobs": {"default": {"max_depth": 1, **job}}}))
    out = tmp_path / "out.jsonl"
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route(WIRE, wire_route)
        seed = f"http://wire.test:{web.port}{WIRE}"
        proc, store = crawl(tmp_path, web, "-c", str(config), "--out", str(out), seeds=[seed])
    return summary(proc), by_path(store), out, store


def by_path(store: Path) -> dict[str, Any]:
    return {path_of(r.url): r for r in records(store)}


def path_of(url: str | None) -> str | None:
    return None if url is None else "/" + url.split("/", 3)[3]


def groups(stored: dict[str, Any]) -> dict[str, str | None]:
    """Each copy's path -> the path its record says it duplicates."""
    return {path: path_of(stored[path].near_duplicate_of) for path in COPIES}


def check_one_original_per_story(found: dict[str, str | None]) -> None:
    """The copies of the story point at one of them, which points nowhere;
    the other story is nobody's copy. Which copy came first is the crawl's
    order, so the test does not assume it."""
    story = [path for path in COPIES if path != OTHER]
    firsts = {found[path] or path for path in story}
    assert len(firsts) == 1, found
    (first,) = firsts
    assert found[first] is None
    assert found[OTHER] is None


def test_copies_are_marked_with_the_first_url_in_store_and_export(tmp_path: Path) -> None:
    result, stored, out, _ = crawl_wire(tmp_path, {"article": True})
    found = groups(stored)
    check_one_original_per_story(found)
    copies = sum(1 for path in COPIES if found[path] is not None)
    assert copies == 3
    assert result["near_duplicates"] == {"default": {"marked": 3}}
    for path in COPIES:  # marked copies keep their items
        assert stored[path].data["kind"] == "article"
    exported = {path_of(row["url"]): row for row in map(json.loads, out.read_text().splitlines())}
    for path in COPIES:
        assert path_of(exported[path]["near_duplicate_of"]) == found[path]


def test_drop_stores_the_copies_without_their_items(tmp_path: Path) -> None:
    result, stored, _, _ = crawl_wire(tmp_path, {"article": True, "near_duplicates": "drop"})
    found = groups(stored)
    check_one_original_per_story(found)
    assert result["near_duplicates"] == {"default": {"dropped": 3}}
    for path in COPIES:
        assert bool(stored[path].data) == (found[path] is None), path


def test_keep_leaves_the_copies_alone(tmp_path: Path) -> None:
    result, stored, _, _ = crawl_wire(tmp_path, {"article": True, "near_duplicates": "keep"})
    assert all(stored[path].near_duplicate_of is None for path in COPIES)
    assert all(stored[path].data["kind"] == "article" for path in COPIES)
    assert "near_duplicates" not in result


def test_reextract_fills_the_fingerprints_of_pages_stored_without_them(tmp_path: Path) -> None:
    _, before, _, store = crawl_wire(tmp_path, {})
    assert all(before[path].simhash is None for path in COPIES)
    config = tmp_path / "article.yaml"
    jobs = {"default": {"article": True, "max_depth": 1}}
    config.write_text(json.dumps({"store": {"uri": f"sqlite:///{store}"}, "jobs": jobs}))
    done = summary_of(reextract(tmp_path, config))
    assert done["changed"] == len(COPIES) + 1  # the copies and the home page
    after = by_path(store)
    first = after[WIRE + "ledger/tunnel"].simhash
    assert first is not None
    for path in COPIES:
        found = after[path].simhash
        assert found is not None and after[path].data["kind"] == "article"
        assert (distance(first, found) <= NEAR_BITS) == (path != OTHER), path
    # The copies are decided from the store's records, the first fetched first.
    check_one_original_per_story(groups(after))
    assert done["near_duplicates"] == {"marked": 3}
