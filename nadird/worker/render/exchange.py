"""What the renderer and its callers exchange, without importing Playwright.

The browser asks for every resource a page needs as a SubRequest; the
worker's policy answers with a Reply (Fulfil with bytes it fetched itself,
or Abort). Keeping these plain lets the policy be tested without a browser
and keeps Playwright an optional dependency of workers that render.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

WaitUntil = Literal["settle", "load", "domcontentloaded", "networkidle"]


class RenderFailed(Exception):
    """A page could not be rendered; the message is the detail of the error."""


class RenderTimeout(RenderFailed):
    """The page did not settle (wait condition) within the max wait."""


@dataclass(frozen=True, slots=True)
class Document:
    """The page as the worker fetched it; the browser is handed these bytes
    instead of fetching the page a second time."""

    url: str
    status: int
    content_type: str  # the Content-Type header to serve it with
    body: bytes


@dataclass(frozen=True, slots=True)
class WaitRules:
    """When a page is rendered enough. A page event (`until`), then the
    selector; with "settle", the load event, the selector, then `quiet`
    seconds with no request in flight and no DOM change, as long as
    `max_wait` allows (a page that never goes quiet is taken as it is then).
    """

    until: WaitUntil = "load"  # a job's default is "settle" (job/spec.py)
    selector: str | None = None  # a CSS selector to be attached, after `until`
    max_wait: float = 15.0  # seconds for everything, sub-requests included
    quiet: float = 0.5  # seconds, for "settle"


@dataclass(frozen=True, slots=True)
class SubRequest:
    url: str
    method: str
    resource_type: str  # Playwright's: script, xhr, fetch, image, stylesheet...
    # A top-level navigation away from the rendered page (a script setting
    # location, a popup): never followed inside the renderer.
    navigation: bool = False


@dataclass(frozen=True, slots=True)
class Fulfil:
    status: int
    content_type: str | None
    body: bytes


@dataclass(frozen=True, slots=True)
class Abort:
    reason: str  # what the page's statistics count it as
    code: str = "blockedbyclient"  # the network error the page sees


Reply = Fulfil | Abort
Answer = Callable[[SubRequest], Awaitable[Reply]]
