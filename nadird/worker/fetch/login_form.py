"""The page a login fetches first (`login.prefetch`): the form that sets a
cookie and holds a hidden token (csrf) the login must send back.

The prefetch goes into the login's own jar (fetch/cookies.py), redirects
and all, so the login request carries its cookies; the token is read from
the form (`csrf.css` and its attribute) or from a JSON answer
(`csrf.jmes`). Neither the token nor the page is logged or stored.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import jmespath

from nadird.job.login import CsrfRule, LoginSpec
from nadird.worker.fetch.cookies import DomainJar
from nadird.worker.fetch.fetcher import Fetcher, FetchOutcome
from nadird.worker.parse.jsonsources import is_json_type, load_json
from nadird.worker.parse.parser import parse_html

# A token longer than this is no token (and must not fill a request).
MAX_TOKEN_CHARS = 4096


async def prefetch(
    fetcher: Fetcher,
    spec: LoginSpec,
    jar: DomainJar,
    turn: Callable[[], Awaitable[None]],
    use_proxy: bool,
) -> tuple[dict[str, str], dict[str, str]]:
    """GET the prefetch page into `jar`: the token as (fields, headers) to add
    to the login request (both empty without `csrf`)."""
    assert spec.prefetch is not None
    await turn()
    outcome = await fetcher.fetch(spec.prefetch, use_proxy=use_proxy, jar=jar)
    if outcome.status >= 400:
        raise ValueError(f"the login's prefetch page was answered {outcome.status}")
    rule = spec.csrf
    if rule is None:
        return {}, {}
    token = csrf_token(rule, outcome)
    if not token or len(token) > MAX_TOKEN_CHARS:
        where = f"css {rule.css!r}" if rule.css is not None else f"jmes {rule.jmes!r}"
        raise ValueError(f"the login's prefetch page holds no token at login.csrf ({where})")
    if rule.field is not None:
        return {rule.field: token}, {}
    assert rule.header is not None
    return {}, {rule.header: token}


def csrf_token(rule: CsrfRule, outcome: FetchOutcome) -> str:
    """The token of a prefetched page ("" if it holds none)."""
    if rule.jmes is not None:
        if not is_json_type(outcome.content_type):
            return ""
        try:
            found = jmespath.search(rule.jmes, load_json(outcome.body))
        except ValueError:
            return ""
        return found if isinstance(found, str) else ""
    assert rule.css is not None
    doc = parse_html(outcome.body, outcome.final_url, outcome.charset)
    if doc is None:
        return ""
    for element in doc.cssselect(rule.css):
        value = element.get(rule.attr)
        if value:
            return str(value)
    return ""
