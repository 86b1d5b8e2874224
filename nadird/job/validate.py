"""The check a job passes before any crawl starts: every selector and link rule
compiles and runs on a probe document, so a job that loads is one every
worker can run."""

from __future__ import annotations

from nadird.job.link_rules import validate_link_rules
from nadird.job.selectors import validate_fields
from nadird.job.spec import Job


def validate_job(job: Job) -> None:
    """Raise ValueError naming the first selector or link rule the worker
    could not use ('fields.title[0]: invalid xpath ...', 'links.allow[1]: ...')."""
    validate_fields(job.fields)
    validate_link_rules(job.links)
