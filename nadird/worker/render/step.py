"""When a fetched page is rendered, and how its result is built.

The page is fetched as always (robots.txt, pace, limits: the access log looks
the same); then, for an HTML answer below 400, the browser is handed those
very bytes, runs the scripts (their requests answered by subrequests.py),
and the DOM it ends with replaces the body. The result is built by the same
code as for fetched HTML (PageProcessor._from_outcome): fields, links,
robots meta, canonical, stored body, all from the rendered DOM.

`render: auto` renders only a page whose fetched HTML lacks a required
field: one of `render_when_missing` (every field of the job when that list
is empty) that the rules extracted as nothing (None, "" or []). A field not
extracted on purpose (noindex page, a page deferring to its canonical URL)
is not missing, so such pages are never rendered. With
`render_when_invalid`, a page whose item fails its schema (values present,
but invalid: a placeholder a script fills in) is rendered too, and the
rendered item is the one stored, valid or not.

Errors are recorded like fetch errors (status 0, an ErrorKind) and are not
retried by the master: `render_timeout` (the wait condition was not met in
`render_max_wait`), `render` (the browser failed, or crashed twice on the
page), `render_unavailable` (this worker has no browser), `too_large` (the
rendered DOM is over fetch.max_decoded_bytes).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from nadird.common.errors import ConfigError, ErrorKind, FetchError
from nadird.common.logs import get_logger
from nadird.config import Config, FetchConfig
from nadird.items.schema import VALID
from nadird.job.spec import JAVASCRIPT, Job
from nadird.protocol.exchange import Exchange
from nadird.protocol.messages import PageResult
from nadird.worker.fetch.fetcher import FetchOutcome
from nadird.worker.parse.charsets import charset_to_declare
from nadird.worker.render.exchange import Document, RenderFailed, RenderTimeout, WaitRules
from nadird.worker.render.subrequests import SubrequestPolicy

if TYPE_CHECKING:
    from nadird.worker.render.renderer import Renderer

log = get_logger()

Build = Callable[[FetchOutcome], PageResult]
Fail = Callable[[FetchError], PageResult]


def new_renderer(config: Config) -> Renderer | None:
    """The worker's renderer when it has the javascript capability, else None.

    Raises ConfigError (exit status 2) when it could not work on this host,
    so a worker never advertises a capability it lacks. Nothing starts here.
    """
    if JAVASCRIPT not in config.worker.capabilities:
        return None
    render = config.fetch.render
    if importlib.util.find_spec("playwright") is None:
        raise ConfigError(
            "worker.capabilities", JAVASCRIPT, "Playwright installed: pip install 'nadird[render]'"
        )
    exe = render.executable
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        raise ConfigError(
            "fetch.render.executable", exe, "an executable Chromium (apt-get install chromium)"
        )
    from nadird.worker.render.renderer import Renderer

    return Renderer(render, config.fetch.user_agent)


def missing_fields(job: Job, data: dict[str, object]) -> list[str]:
    """The required fields the rules found nothing for (see the module doc)."""
    return [name for name in job.required_fields() if name in data and not data[name]]


def wants_render(job: Job, data: dict[str, object]) -> bool:
    """Whether `render: auto` renders a page whose fetched HTML gave `data`."""
    if missing_fields(job, data):
        return True
    return job.render_when_invalid and data.get(VALID) is False


class RenderStep:
    """A job's rendering for one bag."""

    def __init__(
        self,
        renderer: Renderer | None,
        job: Job,
        policy: SubrequestPolicy,
        fetch: FetchConfig,
    ) -> None:
        self._renderer = renderer
        self._job = job
        self._policy = policy
        self._fetch = fetch
        self._html_types = frozenset(fetch.html_types)
        self._wait = WaitRules(
            job.render_wait, job.render_wait_for, job.render_max_wait, job.render_quiet
        )

    def applies(self, outcome: FetchOutcome) -> bool:
        return (
            self._job.render is not False
            and outcome.content_type in self._html_types
            and outcome.status < 400
        )

    async def result(self, outcome: FetchOutcome, build: Build, fail: Fail) -> PageResult:
        """The page's result, from the rendered DOM when the job asks for it."""
        if not self.applies(outcome):
            return build(outcome)
        if self._job.render == "auto":
            plain = build(outcome)
            if plain.error is not None or not wants_render(self._job, plain.data):
                return plain
        if self._renderer is None:
            why = "no browser on this worker (capability javascript)"
            return fail(FetchError(ErrorKind.RENDER_UNAVAILABLE, why))
        try:
            rendered, fetched = await self._render(outcome)
        except RenderTimeout as exc:
            return fail(FetchError(ErrorKind.RENDER_TIMEOUT, str(exc)))
        except RenderFailed as exc:
            return fail(FetchError(ErrorKind.RENDER, str(exc)))
        limit = self._fetch.max_decoded_bytes
        if len(rendered) > limit:
            return fail(FetchError(ErrorKind.TOO_LARGE, f"rendered page exceeds {limit} bytes"))
        # The archive keeps what the browser was given besides the page.
        exchanges = [*outcome.exchanges, *fetched]
        page = build(
            dataclasses.replace(outcome, body=rendered, charset="utf-8", exchanges=exchanges)
        )
        return dataclasses.replace(page, rendered=True)

    async def _render(self, outcome: FetchOutcome) -> tuple[bytes, list[Exchange]]:
        """The rendered DOM, and the sub-requests' exchanges (when archiving)."""
        assert self._renderer is not None
        content_type = outcome.content_type or "text/html"
        # Left to itself, the browser could read an undeclared page in
        # another encoding than the one the fetched HTML was read in.
        charset = charset_to_declare(outcome.body, outcome.charset)
        if charset:
            content_type += f"; charset={charset}"
        document = Document(outcome.final_url, outcome.status, content_type, outcome.body)
        requests = self._policy.page()
        html = await self._renderer.render(document, self._wait, requests)
        log.debug(
            "page_rendered",
            url=outcome.final_url,
            subrequests=len(requests.fetched),
            blocked=dict(requests.blocked),
            bytes=requests.bytes,
        )
        return html.encode("utf-8"), requests.exchanges
