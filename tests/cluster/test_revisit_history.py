"""Page history in both stores: a version per change, none twice, the diffs."""

from __future__ import annotations

from pathlib import Path

from support.mongo_helpers import make_store, sync_db
from support.page_versions_helpers import _check, _history
from support.revisit_history_helpers import _latest_changes


async def test_mongo_keeps_a_version_per_change(mongo_uri: str, tmp_path: Path) -> None:
    _check(await _history(make_store(mongo_uri, tmp_path)))
    with sync_db(mongo_uri) as db:
        assert db["changes"].count_documents({}) == 3
        names = {index["name"] for index in db["changes"].list_indexes()}
    assert {"job_url_time", "time_id"} <= names
    assert not {"url_time", "time"} & names  # replaced by those two


async def test_mongo_lists_its_latest_changes_newest_first(mongo_uri: str, tmp_path: Path) -> None:
    await _latest_changes(make_store(mongo_uri, tmp_path))
