"""Opening a MongoStore with no server listening."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.mongo_helpers import make_store

from nadird.common.errors import StoreError
from nadird.testing.mongo import free_port


async def test_unreachable_server_at_open_is_a_store_error(tmp_path: Path) -> None:
    uri = f"mongodb://127.0.0.1:{free_port()}/nadird"
    store = make_store(uri, tmp_path)
    with pytest.raises(StoreError, match=r"cannot use MongoDB at mongodb://127\.0\.0\.1"):
        await store.open()
