"""The console's pages and forms, built from what `MasterView` shows."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from nadird.common.errors import StoreError
from nadird.master.console import format as fmt
from nadird.master.console import news_view
from nadird.master.console.app import PREFIX, ConsoleApp, PageError, redirect
from nadird.master.console.browser_sessions import Session
from nadird.master.console.domains import SORTS, domain_page
from nadird.master.console.paging import PER_PAGE, page_number
from nadird.master.observe.history import WINDOWS
from nadird.master.view import status
from nadird.master.view.api_body import MAX_SEEDS_PER_REQUEST


def overview_numbers(stats: dict[str, Any]) -> dict[str, Any]:
    """The crawl at a glance, from /api/stats (console.js computes the same)."""
    queued = int(stats["queued"])
    rate = float(stats["pages_per_s"])
    return {
        # Pages in the store (a dash until counted), not writes: a page
        # fetched again is still one page.
        "stored": stats["stored_total"],
        "pages_per_s": rate,
        "queued": queued,
        "leases": stats["leases"],
        "errors": error_count(stats),
        "dead_letters": stats.get("dead_letters", 0),
        "workers": stats["workers"],
        "seen": stats["seen"],
        "eta": None if stats["complete"] else fmt.eta(queued, rate),
    }


def error_count(stats: dict[str, Any]) -> int:
    """Failed fetches (by kind) and 4xx/5xx answers."""
    answers: dict[str, int] = stats["http_status"]
    kinds: dict[str, int] = stats["errors_by_kind"]
    return sum(kinds.values()) + answers.get("4xx", 0) + answers.get("5xx", 0)


def _wall_of(monotonic: float) -> float:
    return time.time() - (time.monotonic() - monotonic)


class Pages:
    def __init__(self, console: ConsoleApp) -> None:
        self.console = console
        self.master = console.master

    def add_routes(self, app: web.Application) -> None:
        page, action = self.console.page, self.console.action
        gets: dict[str, Callable[..., Any]] = {
            "": self.overview,
            "/jobs": self.jobs,
            "/domains": self.domains,
            "/workers": self.workers,
            "/dead-letters": self.dead_letters,
            "/alerts": self.alerts,
            "/errors": self.errors,
            "/changes": self.changes,
        }
        for path, handler in gets.items():
            app.router.add_get(PREFIX + path, page(handler))
        app.router.add_post(PREFIX + "/jobs/{job}/pause", action(self.pause))
        app.router.add_post(PREFIX + "/jobs/{job}/resume", action(self.resume))
        app.router.add_post(PREFIX + "/seeds", action(self.seeds))
        app.router.add_post(PREFIX + "/dead-letters/retry", action(self.retry))

    def _render(
        self, request: web.Request, name: str, session: Session, here: str, **context: Any
    ) -> web.Response:
        return self.console.render(request, name, session, here=here, **context)

    def _notify(self, request: web.Request, session: Session, key: str, **params: Any) -> None:
        """A notice for the next page, in this request's language."""
        self.console.sessions.notify(session.id, self.console.strings(request).text(key, **params))

    # --------------------------------------------------------------- pages
    async def overview(self, request: web.Request, session: Session) -> web.Response:
        stats = status.full(self.master)
        numbers = overview_numbers(stats)
        window = request.query.get("window", "hour")
        return self._render(
            request, "overview.html", session, "", n=numbers, stats=stats,
            window=window if window in WINDOWS else "hour", every=self.master.history.every,
            feeds=news_view.discovery(stats, self.master.discovery_buckets()),
            sources=news_view.SOURCES,
            articles=news_view.articles(stats),
        )  # fmt: skip

    async def jobs(self, request: web.Request, session: Session) -> web.Response:
        jobs = sorted(self.master.jobs().items())
        return self._render(
            request, "jobs.html", session, "/jobs", jobs=jobs, max_seeds=MAX_SEEDS_PER_REQUEST
        )

    async def domains(self, request: web.Request, session: Session) -> web.Response:
        sort = request.query.get("sort", "queue")
        if sort not in SORTS:
            sort = "queue"
        table = domain_page(self.master, sort, request.query)
        return self._render(request, "domains.html", session, "/domains", table=table, sorts=SORTS)

    async def workers(self, request: web.Request, session: Session) -> web.Response:
        nodes = status.nodes(self.master)
        return self._render(request, "workers.html", session, "/workers", nodes=nodes)

    async def dead_letters(self, request: web.Request, session: Session) -> web.Response:
        wanted = page_number(request.query, 10**9)  # clamped below, once the total is known
        total, letters = self.master.dead_letter_page(wanted.offset, PER_PAGE)
        page = page_number(request.query, total)
        if page.number != wanted.number:
            total, letters = self.master.dead_letter_page(page.offset, PER_PAGE)
        return self._render(
            request, "dead_letters.html", session, "/dead-letters", letters=letters, page=page
        )

    async def alerts(self, request: web.Request, session: Session) -> web.Response:
        open_alerts = [(a, _wall_of(a.since)) for a in self.master.open_alerts()]
        recent = [(e, _wall_of(e.at)) for e in reversed(self.master.recent_alerts())]
        rules = len(self.master.config.alerts.rules)
        return self._render(
            request, "alerts.html", session, "/alerts", open=open_alerts, recent=recent, rules=rules
        )

    async def errors(self, request: web.Request, session: Session) -> web.Response:
        failed = status.failures(self.master)
        kinds = sorted(failed.items(), key=lambda kv: (-kv[1], kv[0]))
        recent = list(reversed(self.master.recent_errors()))
        return self._render(request, "errors.html", session, "/errors", kinds=kinds, recent=recent)

    async def changes(self, request: web.Request, session: Session) -> web.Response:
        problem = None
        try:
            changes = await self.master.recent_changes(PER_PAGE)
        except StoreError as exc:
            changes, problem = [], str(exc)
        return self._render(
            request, "changes.html", session, "/changes", changes=changes, problem=problem
        )

    # --------------------------------------------------------------- forms
    def _job_or_404(self, request: web.Request) -> str:
        job = request.match_info["job"]
        if job not in self.master.jobs():
            raise PageError(404, "error.unknown_job")
        return job

    async def pause(self, request: web.Request, session: Session, _form: Any) -> web.StreamResponse:
        job = self._job_or_404(request)
        self.master.pause_job(job)
        self._notify(request, session, "notice.paused", job=job)
        return redirect(PREFIX + "/jobs")

    async def resume(
        self, request: web.Request, session: Session, _form: Any
    ) -> web.StreamResponse:
        job = self._job_or_404(request)
        self.master.resume_job(job)
        self._notify(request, session, "notice.resumed", job=job)
        return redirect(PREFIX + "/jobs")

    async def seeds(self, request: web.Request, session: Session, form: Any) -> web.StreamResponse:
        job, text = form.get("job"), form.get("urls")
        jobs = self.master.jobs()
        strings = self.console.strings(request)
        if not isinstance(job, str) or job not in jobs or not isinstance(text, str):
            self._notify(request, session, "notice.seeds_missing")
            return redirect(PREFIX + "/jobs")
        urls = [line.strip() for line in text.splitlines() if line.strip()]
        if len(urls) > MAX_SEEDS_PER_REQUEST:
            notice = strings.text(
                "notice.seeds_too_many", max=MAX_SEEDS_PER_REQUEST, count=len(urls)
            )
        else:
            invalid: list[tuple[int, str]] = []
            admitted = self.master.admit_seeds([(url, job) for url in urls], invalid)
            notice = strings.text(
                "notice.seeds_admitted", admitted=admitted, total=len(urls), job=job
            )
            if invalid:
                # The reasons are the master's own words (as /api/seeds gives them).
                shown = "; ".join(f"{urls[i]}: {why}" for i, why in invalid[:5])
                notice += " " + strings.text("notice.seeds_refused", refused=shown)
        self.console.sessions.notify(session.id, notice)
        return redirect(PREFIX + "/jobs")

    async def retry(self, request: web.Request, session: Session, form: Any) -> web.StreamResponse:
        if form.get("all") == "1":
            total, _ = self.master.dead_letter_page(0, 0)
            fps = [letter.fp for letter in self.master.dead_letter_page(0, total)[1]]
        else:
            given = [_fp(value) for value in form.getall("fp", [])]
            fps = [fp for fp in given if fp is not None]
        marked = self.master.retry_dead_letters(fps)
        poll = self.master.config.master.dead_letter_poll
        self._notify(request, session, "notice.retried", marked=marked, poll=f"{poll:g}")
        return redirect(PREFIX + "/dead-letters")


def _fp(value: object) -> bytes | None:
    """A fingerprint from its hex form in a form field; None if it is not one."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        return bytes.fromhex(value)
    except ValueError:
        return None
