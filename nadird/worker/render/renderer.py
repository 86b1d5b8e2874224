"""One headless browser per worker, a bounded number of pages at a time.

Each render gets a fresh browser context (no cookie, cache or storage is
shared between pages or sites), its document served from the bytes the
worker already fetched, and every other request answered by the caller's
policy (subrequests.py): the browser never fetches anything itself.

The browser is replaced when it crashes (a render in flight then gets one
more try on the new one), after `restart_after_pages` pages, and when its
processes together use more than `max_memory_mb`. A browser being replaced
takes no new page and is closed once its last page is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections import Counter

from playwright.async_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    Request,
    Route,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from nadird.common.logs import get_logger
from nadird.config import RenderConfig
from nadird.worker.render.browser import BrowserHandle, launch, tree_memory_mb
from nadird.worker.render.cache import SubresourceCache
from nadird.worker.render.exchange import (
    Abort,
    Answer,
    Document,
    Fulfil,
    RenderFailed,
    RenderTimeout,
    SubRequest,
    WaitRules,
)
from nadird.worker.render.settle import MUTATION_WATCH, Activity, wait_quiet

log = get_logger()

# Bounds on the calls that have no timeout of their own: page.content() on
# a page stuck in a script, closing a context.
_GRACE = 5.0
_CLOSE_TIMEOUT = 5.0


class _BrowserGone(Exception):
    """The browser died under a render."""


class Renderer:
    def __init__(self, config: RenderConfig, user_agent: str) -> None:
        self.config = config
        self.user_agent = user_agent
        self.restarts: Counter[str] = Counter()  # by reason: crashed, pages, memory
        self.rendered = 0
        # Worker-wide, outside the browser: see cache.py.
        self.cache = SubresourceCache(config.cache_bytes, config.cache_ttl)
        self._slots = asyncio.Semaphore(config.max_concurrent)
        self._launch_lock = asyncio.Lock()
        self._playwright: Playwright | None = None
        self._current: BrowserHandle | None = None
        self._handles: set[BrowserHandle] = set()
        self._generation = 0
        self._closing = False

    @property
    def pid(self) -> int | None:
        """The current browser's process id (None before start or without /proc)."""
        return self._current.pid if self._current is not None else None

    async def start(self) -> None:
        """Start Playwright and the first browser; raises RenderFailed if it cannot."""
        await self._browser()

    async def close(self) -> None:
        self._closing = True
        for handle in list(self._handles):
            await self._close(handle)
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await self._playwright.stop()
            self._playwright = None

    # -------------------------------------------------------------- browser
    async def _browser(self) -> BrowserHandle:
        async with self._launch_lock:
            current = self._current
            if current is not None and current.usable():
                return current
            if current is not None:
                self._retire(current, "crashed")
                if current.active == 0:  # else the last page on it closes it
                    await self._close(current)
            if self._closing:
                raise RenderFailed("the worker is stopping")
            self._current = await self._launch()
            return self._current

    async def _launch(self) -> BrowserHandle:
        self._generation += 1
        error: Exception | None = None
        for _attempt in range(2):
            try:
                if self._playwright is None:
                    self._playwright = await async_playwright().start()
                handle = await launch(self._playwright, self.config, self._generation)
            except Exception as exc:
                # The Playwright driver itself may be what died: start it anew.
                error = exc
                if self._playwright is not None:
                    with contextlib.suppress(Exception):
                        await self._playwright.stop()
                    self._playwright = None
                continue
            handle.browser.on("disconnected", functools.partial(self._on_disconnect, handle))
            self._handles.add(handle)
            log.info("browser_started", pid=handle.pid, generation=handle.generation)
            return handle
        detail = str(error).splitlines()[0] if error is not None else "unknown"
        log.error("browser_start_failed", executable=self.config.executable, error=detail)
        raise RenderFailed(f"browser failed to start: {detail[:300]}")

    def _on_disconnect(self, handle: BrowserHandle, _browser: Browser) -> None:
        if handle.closing:
            return
        handle.crashed = True
        log.warning("browser_crashed", pid=handle.pid, generation=handle.generation)
        if self._current is handle:
            self._retire(handle, "crashed")

    def _retire(self, handle: BrowserHandle, reason: str) -> None:
        if handle.retiring:
            return
        handle.retiring = True
        if self._current is handle:
            self._current = None
        self.restarts[reason] += 1
        log.info("browser_retired", pid=handle.pid, reason=reason, pages=handle.pages)

    async def _close(self, handle: BrowserHandle) -> None:
        if handle.closing:
            return
        handle.closing = True
        try:
            async with asyncio.timeout(_CLOSE_TIMEOUT):
                await handle.browser.close()
        except Exception:
            handle.kill()
        finally:
            handle.dead_port.close()
            self._handles.discard(handle)

    async def _after(self, handle: BrowserHandle) -> None:
        """Leak checks after a page; closes a retired browser once it is idle."""
        cfg = self.config
        if not handle.retiring:
            if handle.pages >= cfg.restart_after_pages:
                self._retire(handle, "pages")
            elif cfg.max_memory_mb and handle.pid is not None:
                now = time.monotonic()
                if now - handle.memory_checked >= cfg.memory_check_interval:
                    handle.memory_checked = now
                    used = tree_memory_mb(handle.pid)
                    if used > cfg.max_memory_mb:
                        log.info("browser_memory", pid=handle.pid, mb=round(used, 1))
                        self._retire(handle, "memory")
        if handle.retiring and handle.active == 0:
            await self._close(handle)

    # --------------------------------------------------------------- render
    async def render(self, document: Document, wait: WaitRules, answer: Answer) -> str:
        """The page's DOM as HTML once `wait` is met. Raises RenderTimeout
        past wait.max_wait, RenderFailed for anything else."""
        async with self._slots:
            for attempt in (1, 2):
                handle = await self._browser()
                handle.active += 1
                try:
                    return await self._render_on(handle, document, wait, answer)
                except _BrowserGone:
                    if attempt == 2:
                        raise RenderFailed("the browser crashed twice on this page") from None
                    log.warning("render_retried", url=document.url, why="browser crashed")
                finally:
                    handle.active -= 1
                    handle.pages += 1
                    self.rendered += 1
                    await self._after(handle)
        raise AssertionError("unreachable")

    async def _render_on(
        self, handle: BrowserHandle, document: Document, wait: WaitRules, answer: Answer
    ) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait.max_wait
        context: BrowserContext | None = None
        try:
            context = await handle.browser.new_context(
                user_agent=self.user_agent, service_workers="block", accept_downloads=False
            )
            if wait.until == "settle":
                await context.add_init_script(MUTATION_WATCH)
            page = await context.new_page()
            router = _Router(page, document, answer, deadline)
            await context.route("**/*", router.handle)
            return await _settle(page, document.url, wait, deadline, router.activity)
        except (PlaywrightTimeout, TimeoutError):
            raise RenderTimeout(f"did not settle within {wait.max_wait:g}s") from None
        except PlaywrightError as exc:
            if handle.crashed or not handle.browser.is_connected():
                raise _BrowserGone from None
            raise RenderFailed(_first_line(exc)) from None
        finally:
            if context is not None:
                await self._close_context(handle, context)

    async def _close_context(self, handle: BrowserHandle, context: BrowserContext) -> None:
        try:
            async with asyncio.timeout(_CLOSE_TIMEOUT):
                await context.close()
        except Exception:
            if handle.browser.is_connected() and not handle.crashed:
                # A context that cannot be closed is a leak: replace the browser.
                self._retire(handle, "stuck")


async def _settle(
    page: Page, url: str, wait: WaitRules, deadline: float, activity: Activity
) -> str:
    loop = asyncio.get_running_loop()

    def left_ms() -> float:
        return max(1.0, (deadline - loop.time()) * 1000)

    # Playwright's own timeouts bound what it waits for; the outer one
    # bounds what it does not (content() of a page stuck in a loop).
    async with asyncio.timeout_at(deadline + _GRACE):
        until = "load" if wait.until == "settle" else wait.until
        await page.goto(url, wait_until=until, timeout=left_ms())
        if wait.selector is not None:
            await page.wait_for_selector(wait.selector, state="attached", timeout=left_ms())
        if loop.time() > deadline:
            raise TimeoutError
        # Quiet is waited for as long as max_wait allows, never more: see settle.py.
        if wait.until == "settle" and not await wait_quiet(page, activity, wait.quiet, deadline):
            log.info("render_unsettled", url=url[:300], quiet=wait.quiet)
        return await page.content()


class _Router:
    """Serves the document from memory and hands every other request to the policy."""

    def __init__(self, page: Page, document: Document, answer: Answer, deadline: float) -> None:
        self._page = page
        self._document = document
        self._answer = answer
        self._deadline = deadline
        self._served = False
        self.activity = Activity()

    async def handle(self, route: Route) -> None:
        self.activity.started()
        try:
            # The page or browser may go away meanwhile: then nobody is waiting.
            with contextlib.suppress(PlaywrightError):
                await self._handle(route)
        finally:
            self.activity.ended()

    async def _handle(self, route: Route) -> None:
        request = route.request
        navigation = request.is_navigation_request() and _top_level(request)
        if navigation and not self._served and request.frame == self._page.main_frame:
            self._served = True
            doc = self._document
            await route.fulfill(
                status=doc.status, headers={"content-type": doc.content_type}, body=doc.body
            )
            return
        sub = SubRequest(request.url, request.method, request.resource_type, navigation)
        try:
            async with asyncio.timeout_at(self._deadline):
                reply = await self._answer(sub)
        except TimeoutError:
            reply = Abort("timeout", "timedout")
        except Exception:  # a bug in the policy must not leave the page waiting
            log.exception("subrequest_failed", url=request.url[:300])
            reply = Abort("internal", "failed")
        if isinstance(reply, Fulfil):
            headers = {"content-type": reply.content_type} if reply.content_type else {}
            await route.fulfill(status=reply.status, headers=headers, body=reply.body)
        else:
            await route.abort(reply.code)


def _top_level(request: Request) -> bool:
    # Requests of service workers have no frame: blocked anyway, and not navigations.
    try:
        return request.frame.parent_frame is None
    except PlaywrightError:
        return False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]
