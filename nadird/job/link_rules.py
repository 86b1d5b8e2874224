"""Which discovered links a job follows: scope, allow and deny patterns."""

from __future__ import annotations

import re

from nadird.common.urls import domain_of, host_of, registrable_domain
from nadird.job.jmes import compile_jmes
from nadird.job.spec import LinkRules


class LinkFilter:
    """Which discovered links a job follows, seen from pages of one domain.

    Build one per (job, page domain) and reuse it: patterns are compiled here.
    `seed_domain` may be a host or a registrable domain; "same-domain" compares
    registrable domains. Raises ValueError naming the rule that is invalid.
    """

    __slots__ = ("_allow", "_allowed_domains", "_deny", "_domain", "_follow", "_scope")

    def __init__(self, rules: LinkRules, seed_domain: str) -> None:
        if rules.scope not in ("same-domain", "allowed-domains", "any"):
            raise ValueError(f"links.scope: unknown scope {rules.scope!r}")
        self._follow = rules.follow
        self._scope = rules.scope
        self._domain = registrable_domain(seed_domain)
        self._allowed_domains = frozenset(
            _allowed_domain(entry, i) for i, entry in enumerate(rules.allowed_domains)
        )
        self._allow = _compile_patterns(rules.allow, "links.allow")
        self._deny = _compile_patterns(rules.deny, "links.deny")

    def allowed(self, url: str) -> bool:
        """True if the canonical URL is in scope, matches an allow pattern and no deny one."""
        return (
            self._follow
            and self._in_scope(url)
            and (not self._allow or any(p.search(url) for p in self._allow))
            and not any(p.search(url) for p in self._deny)
        )

    def _in_scope(self, url: str) -> bool:
        if self._scope == "any":
            return True
        if self._scope == "same-domain":
            return domain_of(url) == self._domain
        return _host_in(host_of(url), self._allowed_domains)


def validate_link_rules(rules: LinkRules) -> None:
    """Raise ValueError('links....: ...') if the rules cannot build a LinkFilter
    or a `jmes` expression does not compile."""
    LinkFilter(rules, "example.com")
    for i, expr in enumerate(rules.jmes):
        if not expr.strip():
            raise ValueError(f"links.jmes[{i}]: empty expression")
        compile_jmes(expr, f"links.jmes[{i}]")


def _compile_patterns(patterns: list[str], where: str) -> tuple[re.Pattern[str], ...]:
    compiled = []
    for i, pattern in enumerate(patterns):
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ValueError(f"{where}[{i}]: invalid regex {pattern!r}: {exc}") from None
    return tuple(compiled)


def _allowed_domain(entry: str, index: int) -> str:
    """An allowed_domains entry as it appears in canonical URLs: lower-case, ASCII."""
    domain = entry.strip().lower().removeprefix("*.").strip(".[]")
    if not domain or "/" in domain:
        raise ValueError(f"links.allowed_domains[{index}]: expected a domain name, got {entry!r}")
    try:
        return domain.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise ValueError(f"links.allowed_domains[{index}]: bad domain {entry!r}: {exc}") from None


def _host_in(host: str, domains: frozenset[str]) -> bool:
    """True if the host or one of its parent domains is listed."""
    if host in domains:
        return True
    # Parents of an IP address are not domains: '0.0.1' is no parent of '10.0.0.1'.
    if ":" in host or host.rpartition(".")[2].isdigit():
        return False
    while (dot := host.find(".")) != -1:
        host = host[dot + 1 :]
        if host in domains:
            return True
    return False
