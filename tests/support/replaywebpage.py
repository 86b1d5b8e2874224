"""ReplayWeb.page (Webrecorder's in-browser replay of WARC and WACZ), for the
test that opens a packed WACZ in it.

Its npm package `replaywebpage` (AGPL-3.0-or-later) ships the two files an
embedding page needs: ui.js (the <replay-web-page> element) and sw.js (the
service worker that replays the archive). They weigh about 2 MB of built
JavaScript, so they are not kept in the repository: `npm pack` fetches the
pinned version into .replaywebpage/VERSION/ beside the checkout (.ci/run does
it before the tests; the test does it too when the folder is missing), or
$NADIRD_REPLAYWEBPAGE names a folder that holds them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from aiohttp import web

from nadird.testing.web import SyntheticWeb
from support import REPO

VERSION = "2.5.3"
TARBALL_SHA1 = "062dc5235b25adfcf7313d9ce0c40e9e7bada210"  # as the npm registry lists it
FILES = ("ui.js", "sw.js", "LICENSE")


def folder() -> Path:
    given = os.environ.get("NADIRD_REPLAYWEBPAGE")
    return Path(given) if given else REPO / ".replaywebpage" / VERSION


def missing(where: Path) -> list[str]:
    return [name for name in FILES if not (where / name).is_file()]


def ensure() -> Path | str:
    """The folder holding ui.js and sw.js, fetched with npm if need be; or
    why they cannot be had."""
    where = folder()
    if not missing(where):
        return where
    npm = shutil.which("npm")
    if npm is None:
        return f"ReplayWeb.page is not in {where} and there is no npm to fetch it"
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [npm, "pack", f"replaywebpage@{VERSION}", "--silent"],
            cwd=scratch, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            return f"npm pack replaywebpage@{VERSION} failed: {done.stderr.strip()[-500:]}"
        tarball = Path(scratch) / f"replaywebpage-{VERSION}.tgz"
        if hashlib.sha1(tarball.read_bytes()).hexdigest() != TARBALL_SHA1:
            return f"{tarball.name}: not the tarball of replaywebpage {VERSION} (sha1)"
        with tarfile.open(tarball) as tgz:
            where.mkdir(parents=True, exist_ok=True)
            for name in FILES:
                member = tgz.extractfile(f"package/{name}")
                assert member is not None, name
                (where / name).write_bytes(member.read())
    return where


# The replay frame's own page (replay/), which the service worker serves once
# it runs; served from the network too for a frame that loads before.
APP_PAGE = (
    '<!doctype html><html><head><script src="./ui.js"></script></head>'
    "<body><replay-app-main></replay-app-main></body></html>"
)


def embedding_page(wacz_url: str, page_url: str, ts: str = "") -> str:
    """The HTML that embeds the replay of `page_url` (at the capture nearest
    `ts`, 14 digits; the latest without) from the WACZ at `wacz_url` (the
    service worker is looked for at replay/sw.js, its default place)."""
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        '<script src="ui.js"></script></head><body>'
        f'<replay-web-page source="{wacz_url}" url="{page_url}" ts="{ts}" '
        'style="display:block;width:1200px;height:800px"></replay-web-page>'
        "</body></html>"
    )


def install(server: SyntheticWeb, files: Path, wacz: Path) -> None:
    """Serve the player from `files` and the package as /crawl.wacz; the page
    /embed?url=URL&ts=TS shows URL's replay ("" for the list of pages)."""
    served = {
        "/ui.js": files / "ui.js",
        "/replay/ui.js": files / "ui.js",
        "/replay/sw.js": files / "sw.js",
        "/crawl.wacz": wacz,
    }

    async def serve(request: web.Request, host: str) -> web.StreamResponse:
        if request.path == "/embed":
            page = embedding_page("crawl.wacz", request.query["url"], request.query.get("ts", ""))
            return web.Response(text=page, content_type="text/html")
        if request.path == "/replay/":
            return web.Response(text=APP_PAGE, content_type="text/html")
        if request.path not in served:
            raise web.HTTPNotFound()
        return ranged(request, served[request.path].read_bytes())

    server.add_route("/", serve)


def ranged(request: web.Request, body: bytes) -> web.Response:
    """The body, or the one byte range asked for (ReplayWeb.page reads a WACZ
    in ranges when the server answers them). Not aiohttp's FileResponse: the
    synthetic web prepares responses itself, which a conditional GET of it
    does not survive."""
    kind = "text/javascript" if request.path.endswith(".js") else "application/octet-stream"
    asked = request.http_range
    if asked.start is None and asked.stop is None:
        return web.Response(body=body, content_type=kind, headers={"Accept-Ranges": "bytes"})
    start, stop, _ = asked.indices(len(body))
    return web.Response(
        status=206,
        body=body[start:stop],
        content_type=kind,
        headers={"Content-Range": f"bytes {start}-{stop - 1}/{len(body)}"},
    )
