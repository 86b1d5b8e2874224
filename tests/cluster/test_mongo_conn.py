"""Connection settings of the MongoDB store: URI parts, options, write concern,
password sources, redaction. No server needed except where named."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.testing.mongo import MongoServer, external_uri


@pytest.mark.slow
async def test_standalone_server_gets_w1(tmp_path: Path) -> None:
    if external_uri() is not None:
        pytest.skip("starts its own standalone SecantusDB")
    from support.mongo_helpers import make_store, record

    with MongoServer(tmp_path / "data", None, "--standalone") as server:
        store = make_store(server.uri("nd"), tmp_path)
        await store.open()
        try:
            await store.write([record(1)])
            assert await store.count() == 1
            assert store._coll("pages").write_concern.document == {"w": 1, "j": True}
        finally:
            await store.close()
