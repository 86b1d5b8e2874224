"""Links a JSON response names (`links.jmes`) and the next page of a walk (`paginate`).

Both give hrefs that then go through the job's link rules like a page's own
links (follow/filter.py): scope, allow and deny, trap guards, max_depth.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from nadird.job.jmes import compile_jmes
from nadird.job.request import RequestSpec
from nadird.job.spec import Pagination
from nadird.worker.parse.fields import present


def json_hrefs(body: Any, expressions: list[str]) -> list[str]:
    """The strings the expressions select in a JSON body, in order (lists flattened)."""
    hrefs: list[str] = []
    for i, expr in enumerate(expressions):
        compiled = compile_jmes(expr, f"links.jmes[{i}]")  # checked when the job loaded
        try:
            found = compiled.search(body)
        except ValueError:  # JMESPath's errors are ValueErrors: data it cannot use
            continue
        hrefs.extend(_strings(found))
    return hrefs


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def next_page(rule: Pagination, data: Mapping[str, Any], page_url: str) -> str | None:
    """The href of the page after `page_url`, or None when the walk ends there.

    `data` holds the page's fields as the selectors found them (before the
    schema's processors). The page number or token lives in the URL's query
    (see next_request for one in a request's body).
    """
    if rule.until_empty is not None and not present(data.get(rule.until_empty)):
        return None
    if rule.next is not None:
        token = _token(data.get(rule.next))
        if token is None:
            return None
        return token if rule.param is None else with_param(page_url, rule.param, token)
    assert rule.param is not None  # Pagination: next or param
    current = page_number(page_url, rule.param, rule.start)
    if current is None:
        return None
    return with_param(page_url, rule.param, str(current + rule.step))


def next_request(
    rule: Pagination, data: Mapping[str, Any], spec: RequestSpec
) -> RequestSpec | None:
    """The request after `spec` in a walk whose page number or cursor (the
    rule's `param`) lives in the body of a form or JSON POST; None when the
    walk ends there. The next request is the same one (method, headers,
    cookies, meta) with that body field set: page+step, or the `next` token."""
    fields = spec.fields()
    assert rule.param is not None and fields is not None  # the caller checks both
    if rule.until_empty is not None and not present(data.get(rule.until_empty)):
        return None
    if rule.next is not None:
        token = _token(data.get(rule.next))
        return None if token is None else spec.with_field(rule.param, token)
    current = fields.get(rule.param, rule.start)
    if isinstance(current, bool):
        return None
    try:
        number = int(current)
    except (TypeError, ValueError):  # not a whole number: no page after it
        return None
    return spec.with_field(rule.param, number + rule.step)


def _token(value: Any) -> str | None:
    """A field's value as one href or token; None when it is empty."""
    if isinstance(value, list):
        value = next((v for v in value if _token(v) is not None), None)
    if isinstance(value, bool) or value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None


def page_number(url: str, param: str, start: int) -> int | None:
    """The page number `param` holds in the URL's query (`start` if absent);
    None when it is not a whole number."""
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        if name == param:
            try:
                return int(value)
            except ValueError:
                return None
    return start


def with_param(url: str, param: str, value: str) -> str:
    """The URL with query parameter `param` set to `value` (added if absent)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != param]
    query.append((param, value))
    return urlunsplit(parts._replace(query=urlencode(query)))
