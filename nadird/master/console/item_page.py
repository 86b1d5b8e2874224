"""The console's page of one keyed item (a job with `item_key`): its clean
fields, every URL it was seen at, and its numbers over the versions of all
those URLs together (one product reached by three URLs is one line)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nadird.master.console.diffs import numeric_columns
from nadird.master.console.url_page import CHART_VERSIONS
from nadird.store.history import Version
from nadird.store.items import KeyedItem

if TYPE_CHECKING:
    from nadird.master.view.view import MasterView

# The chart reads the versions of this many of the item's URLs at most (the
# latest CHART_VERSIONS of each): an item seen at thousands of URLs still
# answers quickly.
CHART_URLS = 20


@dataclass(frozen=True)
class ItemView:
    item: KeyedItem
    chart: dict[str, Any] | None  # as numeric_columns makes it; None: no versions listed
    charted_urls: int


async def item_view(master: MasterView, job: str, key: str) -> ItemView | None:
    """None when there is no such item. StoreError when the store cannot be read."""
    item = await master.keyed_item(job, key)
    if item is None:
        return None
    versions: list[Version] = []
    listed = False
    urls = item.urls[-CHART_URLS:]
    for url in urls:
        found = await master.page_versions(job, url, 0, CHART_VERSIONS - 1)
        if found is not None:
            listed = True
            versions.extend(found[1])
    latest = sorted(versions, key=lambda v: v.fetched_at)[-CHART_VERSIONS:]
    return ItemView(item, numeric_columns(latest) if listed else None, len(urls))
