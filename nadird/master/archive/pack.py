"""A crawl's WARC files as one WACZ package, and its CDXJ index.

WACZ is the package ReplayWeb.page opens: the WARCs, a CDXJ index, a page list
(pages/pages.jsonl) and a datapackage.json with each file's digest. py-wacz
(Webrecorder's own tool, the `wacz` extra) builds it; the page list is made
here from the archive's metadata records, so that it lists the pages the
crawler fetched (their final URL and first capture) rather than guessing them
from the responses. The CDXJ index is cdxj-indexer's (py-wacz's dependency).
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from nadird.master.archive import brotli_reader
from nadird.master.archive.files import SUFFIX
from nadird.master.archive.records import EXTRA_URI

PAGES_HEADER = {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}


class PackError(Exception):
    """Nothing to pack, or the package could not be made (the reason)."""


def warc_files(directory: Path) -> list[Path]:
    """The closed WARC files of a crawl, oldest first (names start with the time)."""
    if not directory.is_dir():
        raise PackError(f"{directory}: not a directory")
    found = sorted(directory.glob("*" + SUFFIX))
    if not found:
        raise PackError(f"{directory}: no {SUFFIX} file (an unfinished one ends in .open)")
    return found


def pages(files: list[Path]) -> Iterator[dict[str, str]]:
    """Each page fetched (status below 400), once, at its first capture."""
    seen: set[str] = set()
    prefix = f"{EXTRA_URI}metadata:"
    for path in files:
        with open(path, "rb") as handle:
            for record in ArchiveIterator(handle):
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                if record.rec_type != "metadata" or not uri.startswith(prefix):
                    continue
                decided = json.loads(record.content_stream().read())
                url = decided.get("final_url") or uri.removeprefix(prefix)
                if url in seen or not 0 < int(decided.get("status") or 0) < 400:
                    continue
                seen.add(url)
                yield {"url": url, "ts": record.rec_headers.get_header("WARC-Date")}


def write_pages(files: list[Path], out: Path) -> int:
    count = 0
    with open(out, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(PAGES_HEADER) + "\n")
        for page in pages(files):
            handle.write(json.dumps(page) + "\n")
            count += 1
    return count


def pack(directory: Path, out: Path, work: Path) -> int:
    """Write the WACZ `out` of the crawl in `directory`; returns its pages."""
    try:
        from wacz.main import main as wacz_main
    except ImportError:
        raise PackError("packing needs py-wacz: pip install 'nadird[wacz]'") from None
    files = warc_files(directory)
    brotli_reader.install()
    page_list = work / "pages.jsonl"
    count = write_pages(files, page_list)
    args = ["create", "-o", str(out), "-p", str(page_list), *map(str, files)]
    chatter = io.StringIO()  # py-wacz prints its progress on stdout
    with contextlib.redirect_stdout(chatter):
        status = wacz_main(args)
    if status != 0 or not out.exists():
        raise PackError(f"py-wacz failed: {chatter.getvalue().strip()[-500:]}")
    return count


def write_index(directory: Path, out: Path) -> None:
    """The CDXJ index of every closed file, sorted (what pywb reads)."""
    try:
        from cdxj_indexer.main import write_cdx_index
    except ImportError:
        raise PackError("indexing needs cdxj-indexer: pip install 'nadird[wacz]'") from None
    files = warc_files(directory)
    brotli_reader.install()
    with open(out, "w", encoding="utf-8") as handle:
        write_cdx_index(handle, [str(f) for f in files], {"sort": True})
