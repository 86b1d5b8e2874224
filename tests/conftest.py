from collections.abc import Iterator
from pathlib import Path

import pytest

from nadird.testing.cluster import Cluster


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    with Cluster(tmp_path / "cluster") as running:
        yield running
