from pathlib import Path

import pytest

from nadird.config import load_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_example_configs_load(path: Path) -> None:
    load_config(path)


def test_readme_opens_with_the_two_setup_commands() -> None:
    text = (ROOT / "README.md").read_text()
    blocks = text.split("```")
    first, second = blocks[1], blocks[3]
    assert "nadird crawl" in first and "pip install" in first
    assert "pytest" in second and ".[test]" in second
    ci = (ROOT / ".ci" / "run").read_text()
    assert second.strip().splitlines()[-1].strip() in ci
