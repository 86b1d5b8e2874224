"""A worker's page result: the store's record of it, and how it is counted.

Both classes inherit their shared fields from nadird.common.record, so the conversion
copies every field the record has and the result carries, in one C-level
attrgetter call; only `job` (one per Results message) and `node` come from
elsewhere. The master converts every page it receives, so the record is
built positionally: the fastest form, about as cheap as a hand-written call.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter
from typing import Any

from nadird.protocol.messages import PageResult
from nadird.store.base import FIELD_NAMES, PageRecord

_ON_THE_WIRE = {f.name for f in dataclasses.fields(PageResult)}
_FROM_PAGE = tuple(name for name in FIELD_NAMES if name in _ON_THE_WIRE)
if tuple(name for name in FIELD_NAMES if name not in _ON_THE_WIRE) != ("job", "node"):
    raise TypeError("a PageRecord field other than job and node is missing from PageResult")
if FIELD_NAMES[-1] != "node":
    raise TypeError("PageRecord.node must be the record's last field")
_JOB_AT = FIELD_NAMES.index("job")
_page_values = attrgetter(*_FROM_PAGE)


def record_from_result(page: PageResult, job: str, node: str) -> PageRecord:
    values: tuple[Any, ...] = _page_values(page)
    return PageRecord(*(*values[:_JOB_AT], job, *values[_JOB_AT:], node))
