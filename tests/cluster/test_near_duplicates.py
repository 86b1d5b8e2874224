"""Near-duplicate articles end to end: a crawl over a story syndicated
across sites marks every copy with the first URL seen with its text (store
and export), `near_duplicates: drop` stores the copies without their items,
and `keep` leaves them alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.articles.wire import COPIES, OTHER, WIRE, wire_route
from test_crawl_command import crawl, records, summary

from nadird.testing.graph import SiteGraph
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow


def crawl_wire(tmp_path: Path, job: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], Path]:
    """(the summary, the stored records by path, the JSON lines export)."""
    config = tmp_path / "wire.yaml"
    config.write_text(json.dumps({"jobs": {"default": {"max_depth": 1, **job}}}))
    out = tmp_path / "out.jsonl"
    with run_in_thread(SiteGraph(hosts=1, pages=2)) as web:
        web.add_route(WIRE, wire_route)
        seed = f"http://wire.test:{web.port}{WIRE}"
        proc, store = crawl(tmp_path, web, "-c", str(config), "--out", str(out), seeds=[seed])
    stored = {r.url.split(str(web.port), 1)[1]: r for r in records(store)}
    return summary(proc), stored, out


def path_of(url: str | None) -> str | None:
    return None if url is None else "/" + url.split("/", 3)[3]


def groups(stored: dict[str, Any]) -> dict[str, str | None]:
    """Each copy's path -> the path its record says it duplicates."""
    return {path: path_of(stored[path].duplicate_of) for path in COPIES}


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
    result, stored, out = crawl_wire(tmp_path, {"article": True})
    found = groups(stored)
    check_one_original_per_story(found)
    copies = sum(1 for path in COPIES if found[path] is not None)
    assert copies == 3
    assert result["near_duplicates"] == {"default": {"marked": 3}}
    for path in COPIES:  # marked copies keep their items
        assert stored[path].data["kind"] == "article"
    exported = {path_of(row["url"]): row for row in map(json.loads, out.read_text().splitlines())}
    for path in COPIES:
        assert path_of(exported[path]["duplicate_of"]) == found[path]


def test_drop_stores_the_copies_without_their_items(tmp_path: Path) -> None:
    result, stored, _ = crawl_wire(tmp_path, {"article": True, "near_duplicates": "drop"})
    found = groups(stored)
    check_one_original_per_story(found)
    assert result["near_duplicates"] == {"default": {"dropped": 3}}
    for path in COPIES:
        assert bool(stored[path].data) == (found[path] is None), path


def test_keep_leaves_the_copies_alone(tmp_path: Path) -> None:
    result, stored, _ = crawl_wire(tmp_path, {"article": True, "near_duplicates": "keep"})
    assert all(stored[path].duplicate_of is None for path in COPIES)
    assert all(stored[path].data["kind"] == "article" for path in COPIES)
    assert "near_duplicates" not in result
