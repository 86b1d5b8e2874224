from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from support.file_seconds import FILE_SECONDS

from nadird.testing.cluster import Cluster

if TYPE_CHECKING:
    from nadird.testing.mongo import MongoServer


# Tests using these fixtures start processes (master and workers, a MongoDB
# server): they are `slow` without saying so. Tests that start processes
# themselves (the CLI, a browser, a server of their own) carry the mark.
PROCESS_FIXTURES = frozenset({"cluster", "mongo_base_uri", "mongo_uri", "own_server"})


# A process-starting test missing from the measured list: the 80th slowest
# took 18 s, most of the others well under (support/file_seconds.py).
SLOW_TEST_SECONDS = 10


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    # Heaviest files first (xdist runs them in this order: pyproject.toml's
    # addopts); the order within a file is kept.
    weights = file_weights(items)
    items.sort(key=lambda item: -weights[file_of(item)])


def file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def file_weights(items: list[pytest.Item]) -> dict[str, int]:
    """Each file's expected seconds: measured, or guessed from its slow tests."""
    slow: Counter[str] = Counter()
    for item in items:
        slow[file_of(item)] += SLOW_TEST_SECONDS if item.get_closest_marker("slow") else 0
    return {name: max(FILE_SECONDS.get(name, 0), guess) for name, guess in slow.items()}


@pytest.fixture(autouse=True)
def _logging_defaults() -> Iterator[None]:
    """A test that runs a command in-process configures logging onto the
    stream pytest captured for it; later tests must not write to that stream
    once it is closed."""
    yield
    import structlog

    from nadird.common.logs import gate

    structlog.reset_defaults()
    gate.set("info")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with Cluster(tmp_path / "cluster") as running:
        yield running


# MongoDB: one SecantusDB server for the session (or NADIRD_TEST_MONGODB_URI),
# and a fresh database per test. Tests that stop a server start their own
# (own_server).


@pytest.fixture(scope="session")
def mongo_base_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from nadird.testing.mongo import MongoServer, external_uri, secantus_available

    external = external_uri()
    if external is not None:
        yield external
        return
    if not secantus_available():
        pytest.fail("no MongoDB server for tests: pip install -e '.[test]' (secantusdb)")
    with MongoServer(tmp_path_factory.mktemp("mongo") / "data") as server:
        yield server.uri("admin")


@pytest.fixture
def mongo_uri(mongo_base_uri: str, request: pytest.FixtureRequest) -> Iterator[str]:
    import re
    import uuid

    from pymongo import MongoClient

    from nadird.testing.mongo import with_database

    name = re.sub(r"\W", "_", request.node.name)[:30]
    uri = with_database(mongo_base_uri, f"nd_{name}_{uuid.uuid4().hex[:8]}")
    yield uri
    client: MongoClient[dict[str, object]] = MongoClient(uri, serverSelectionTimeoutMS=2000)
    try:
        client.drop_database(client.get_default_database())
    except Exception:  # the test may have stopped the server; nothing to clean then
        pass
    finally:
        client.close()


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[MongoServer]:
    """A SecantusDB of this test's own, which the test may stop and start."""
    from nadird.testing.mongo import MongoServer, external_uri

    if external_uri() is not None:
        pytest.skip("stops the server: runs against the bundled SecantusDB only")
    with MongoServer(tmp_path / "mongo" / "data") as server:
        yield server
