"""`nadird crawl`'s options that change the `default` job (--article, --feeds...):
a mapping the config gives is kept, and an option the job's own rules refuse
is a config error naming the file and the job, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from nadird.cli.crawl import CrawlOptions, override_jobs
from nadird.common.errors import ConfigError
from nadird.config import Config, load_config
from nadird.job.article import ArticleSpec


def test_article_and_feeds_turn_on_the_default_job() -> None:
    job = override_jobs(Config(), CrawlOptions(seeds=[], article=True, feeds=True)).jobs["default"]
    assert isinstance(job.article, ArticleSpec) and job.feeds


def test_a_mapping_of_the_config_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("jobs:\n  default:\n    article: {budget: 0.5, images: true}\n")
    opts = CrawlOptions(seeds=[], article=True)
    job = load_config(path, lambda config: override_jobs(config, opts)).jobs["default"]
    assert isinstance(job.article, ArticleSpec)
    assert (job.article.budget, job.article.images) == (0.5, True)


@pytest.mark.parametrize("option", ["article", "feeds"])
def test_an_option_the_job_refuses_names_the_file_and_the_job(tmp_path: Path, option: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("jobs:\n  default:\n    parser: lexbor\n")
    opts = CrawlOptions(seeds=[], **{option: True})  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as caught:
        load_config(path, lambda config: override_jobs(config, opts))
    said = str(caught.value)
    assert str(path) in said and "jobs.default" in said and "parser: lexbor cannot serve" in said
