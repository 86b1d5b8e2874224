"""The snippet-checked evaluation pages of scripts/bench_article_quality.py.

* `trafilatura` 1.1.0 (PyPI, the source distribution; GPL-3.0-or-later, read
  at benchmark time and never copied into nadird): the last release whose
  sdist carries its real-world test pages, `tests/cache/*.html`, real pages
  saved from about a hundred sites (German most, then English and French,
  one Chinese), and `tests/realworld_tests.py`, which names for each page
  sentences the main text must hold and boilerplate it must not (menus,
  "related articles", cookie notices, footers). Those checks, read from the
  test file's syntax tree, are the reference here: no full text, so these
  pages get a snippet score rather than a shingle F1.

Pages whose HTML is the same as another's (in this set or in the full-text
set of article_eval_data.py) are dropped, and so are pages with no check.
"""

from __future__ import annotations

import ast
import hashlib
import tarfile
from dataclasses import dataclass
from pathlib import Path

from article_eval_data import pypi_sdist  # scripts/ on sys.path

TRAFILATURA = ("trafilatura", "1.1.0")


@dataclass(frozen=True)
class SnippetCase:
    """One page, what its main text must contain and what it must not."""

    name: str
    source: str
    url: str  # where the page was saved from (its date, its links)
    html: bytes
    wanted: tuple[str, ...]
    unwanted: tuple[str, ...]


def _page_files(tree: ast.Module) -> dict[str, str]:
    """The test file's MOCK_PAGES: URL -> file name in tests/cache."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MOCK_PAGES":
            return ast.literal_eval(node.value)  # type: ignore[no-any-return]
    raise ValueError("no MOCK_PAGES in the test file")


def _checks(statements: list[ast.stmt]) -> list[tuple[str, list[str], list[str]]]:
    """(URL, wanted, unwanted) per `result = load_mock_page(URL)` and the asserts
    after it, in the order of the source (an `if` block's asserts included)."""
    found: list[tuple[str, list[str], list[str]]] = []
    for node in statements:
        if isinstance(node, ast.If):
            nested = _checks(node.body)
            if found and nested and nested[0][0] == "":
                found[-1][1].extend(nested[0][1])
                found[-1][2].extend(nested[0][2])
                nested = nested[1:]
            found.extend(nested)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if getattr(node.value.func, "id", "") == "load_mock_page":
                found.append((ast.literal_eval(node.value.args[0]), [], []))
        elif isinstance(node, ast.Assert):
            if not found:
                found.append(("", [], []))  # an if block's asserts on the page before it
            for wanted, snippet in _compares(node.test):
                _url, wanted_list, unwanted_list = found[-1]
                (wanted_list if wanted else unwanted_list).append(snippet)
    return found


def _compares(test: ast.expr) -> list[tuple[bool, str]]:
    """(wanted, snippet) of every `'...' in result` / `'...' not in result`."""
    pairs = []
    for node in ast.walk(test):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        left, right, op = node.left, node.comparators[0], node.ops[0]
        on_result = getattr(right, "id", "") == "result" and isinstance(op, ast.In | ast.NotIn)
        if on_result and isinstance(left, ast.Constant) and left.value:
            pairs.append((isinstance(op, ast.In), str(left.value)))
    return pairs


def load_snippet_cases(cache: Path, known_html: set[bytes]) -> list[SnippetCase]:
    """The pages with their checks; `known_html` (sha256 digests) are skipped."""
    archive = pypi_sdist(cache, TRAFILATURA)
    root = f"{TRAFILATURA[0]}-{TRAFILATURA[1]}/tests"
    with tarfile.open(archive) as tar:
        files = {
            m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile() and m.name.startswith(root)
        }
    tree = ast.parse(files[f"{root}/realworld_tests.py"])
    pages = _page_files(tree)
    test = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "test_extract")
    cases, seen = [], set(known_html)
    for url, wanted, unwanted in _checks(test.body):
        if not url:
            continue
        html = files.get(f"{root}/cache/{pages[url]}")
        digest = hashlib.sha256(html or b"").digest()
        if html is None or digest in seen or not (wanted or unwanted):
            continue
        seen.add(digest)
        name = pages[url].removesuffix(".html")
        cases.append(SnippetCase(name, TRAFILATURA[0], url, html, tuple(wanted), tuple(unwanted)))
    return cases
