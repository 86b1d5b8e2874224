"""`article:` in a config file: true, a mapping, and clear errors for the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.common.errors import ConfigError
from nadird.config import load_config
from nadird.job.article import ArticleSpec


def load(tmp_path: Path, article: str) -> object:
    path = tmp_path / "jobs.yaml"
    path.write_text(f"jobs:\n  news:\n    article: {article}\n")
    return load_config(path).jobs["news"].article


def test_true_takes_the_defaults_and_a_mapping_sets_them(tmp_path: Path) -> None:
    assert load(tmp_path, "true") == ArticleSpec()
    assert load(tmp_path, "{budget: 1, max_html_chars: 100}") == ArticleSpec(1.0, 100)
    assert load(tmp_path, "false") is False


@pytest.mark.parametrize(
    ("article", "says"),
    [
        ("{budjet: 1}", "jobs.news.article.budjet: unknown key; expected one of: budget"),
        ("{budget: 0}", "jobs.news.article: budget: must be > 0"),
        ("{max_html_chars: -1}", "jobs.news.article: max_html_chars: must be > 0"),
        ("yes please", "jobs.news.article: expected bool or mapping"),
    ],
)
def test_a_wrong_value_is_refused_naming_the_key(tmp_path: Path, article: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, article)
    assert says in str(caught.value)
