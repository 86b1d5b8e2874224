"""Waiting for a rendered page to settle: what a person would see a moment later.

The load event comes before much of what scripts build: a list filled by a
timer, or by a fetch() answered after load. `render_wait: settle` (a job's
default) therefore waits, after the load event, until for `quiet` seconds
no request of the page has been in flight and its DOM has not changed.

Requests are counted where the worker answers them (renderer.py's router
sees every one). DOM changes are seen by a MutationObserver that an init
script installs before any script of the page runs; the worker reads the
time of the last change from the page, so it sleeps until the earliest
moment the page could be quiet rather than polling at a fixed rate.

A page that never goes quiet (a clock, a ticker, a carousel driven by
script, a request that never ends) is taken as it is when the job's
render_max_wait runs out: that is what a person would read, so it is
extracted, not an error; the worker logs `render_unsettled`.
"""

from __future__ import annotations

import asyncio
import math

from playwright.async_api import Page

# Runs in every frame before the page's own scripts. A non-enumerable
# property, so the page's scripts do not stumble on it when listing window.
MUTATION_WATCH = """
(() => {
  const mark = () => Object.defineProperty(window, "__nadirdChanged", {
    value: performance.now(), configurable: true, enumerable: false, writable: true,
  });
  mark();
  new MutationObserver(mark).observe(document, {
    subtree: true, childList: true, attributes: true, characterData: true,
  });
})();
"""
# Milliseconds since the last DOM change; since navigation began when the
# watch is missing (then only requests decide).
_SINCE_CHANGE = "performance.now() - (window.__nadirdChanged ?? 0)"
# Never sleep less between two looks at the page: each one is a round trip.
_MIN_STEP = 0.02


class Activity:
    """The requests of one page in flight, and when the last one ended."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.in_flight = 0
        self._last_end = self._loop.time()

    def started(self) -> None:
        self.in_flight += 1

    def ended(self) -> None:
        self.in_flight -= 1
        self._last_end = self._loop.time()

    def idle_for(self) -> float:
        """Seconds without a request in flight (0 while one is)."""
        return 0.0 if self.in_flight else self._loop.time() - self._last_end


async def wait_quiet(page: Page, activity: Activity, quiet: float, deadline: float) -> bool:
    """True once the page has been quiet for `quiet` seconds; False when the
    loop time `deadline` comes first."""
    loop = asyncio.get_running_loop()
    while True:
        since_change = await page.main_frame.evaluate(_SINCE_CHANGE)
        if not isinstance(since_change, int | float) or math.isnan(since_change):
            since_change = 0.0
        quiet_for = min(since_change / 1000, activity.idle_for())
        if quiet_for >= quiet:
            return True
        left = deadline - loop.time()
        if left <= 0:
            return False
        await asyncio.sleep(min(left, max(quiet - quiet_for, _MIN_STEP)))
