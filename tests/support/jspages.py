"""A corner of the synthetic web that only a browser can read.

Served under /js/ on any host name (tests use js.test), registered with
SyntheticWeb.add_route. Without JavaScript the home page shows one static
link and empty fields; its script (/js/app.js, deferred) asks a JSON API
for the items and writes their links, and each item page fills its title
and price from the API the same way. So a crawl that does not render
fetches exactly `static_paths()`, and one that renders fetches the items,
their API calls and the script too (`rendered_paths()`); both are questions
for the access log.

Also here, for the renderer's own tests:

* `/js/img/N.png` on every page: images are blocked by default, so the
  access log must never show one;
* a third-party script `http://outside.test:PORT/js/tracker.js` on the home
  page: blocked by default, so outside.test must never be asked;
* `/js/never`: polls `/js/api/tick` forever and never marks itself ready
  (linked from the home page when `never=True`);
* `/js/spin`: a script that never returns;
* `/js/probe?u=URL&u=URL...`: fetches each URL from the page and lists the
  outcome (`<li data-url=... data-result=ok|failed>`), for checking which
  sub-requests the worker lets through;
* pages a script changes after the load event, with no ready mark (what
  `render_wait: settle` is for; read with LIST_FIELDS):
  `/js/late?delay=MS&step=MS2` fills its list from timers, item i at
  MS + i * MS2 ms after load (defaults 300 and 0: all at once),
  `/js/fetched?wait=MS` from a fetch() of the item API started on load and
  answered after MS ms (default 0), and `/js/ticking` changes a clock every
  100 ms for ever.

* `/js/priced?price=P`: a product page whose HTML shows the price
  placeholder "--" (invalid for a numeric schema) and whose script asks
  `/js/api/price?price=P` on load and writes P in its place (read with
  FIELDS): the access log shows which were rendered.

Every script of the shop and the probe sets `data-ready` on <body> once
done: jobs wait for `[data-ready]`.
"""

from __future__ import annotations

import asyncio
import html
import importlib.util
import json
import os

from aiohttp import web

from nadird.testing.web import SyntheticWeb

PREFIX = "/js/"
JS_HOST = "js.test"
THIRD_PARTY_HOST = "outside.test"
# The job fields the pages carry once rendered (CSS selectors).
FIELDS = {"title": [{"css": "h1.title"}], "price": [{"css": ".price"}]}
READY = "[data-ready]"
# For the pages scripts change after load: their heading and list.
LIST_FIELDS = {"title": [{"css": "h1.title"}], "items": [{"css": "#list li", "multiple": True}]}

_HTML = "text/html"
_APP_JS = """
(async function () {
  const path = location.pathname;
  const app = document.getElementById("app");
  if (path === "/js/") {
    const items = await (await fetch("/js/api/items")).json();
    document.querySelector("h1.title").textContent = "JS shop";
    for (const item of items) {
      const a = document.createElement("a");
      a.href = item.href;
      a.textContent = item.title;
      app.appendChild(a);
    }
  } else if (path.startsWith("/js/item/")) {
    const id = path.split("/").pop();
    const item = await (await fetch("/js/api/item/" + id)).json();
    document.querySelector("h1.title").textContent = item.title;
    const price = document.createElement("span");
    price.className = "price";
    price.textContent = item.price;
    app.appendChild(price);
  }
  document.body.setAttribute("data-ready", "1");
})();
"""
_NEVER = """<!doctype html><html><head><title>never</title></head><body>
<h1 class="title"></h1>
<script>setInterval(function () { fetch("/js/api/tick"); }, 100);</script>
</body></html>"""
_SPIN = """<!doctype html><html><head><title>spin</title></head><body>
<script>while (true) {}</script></body></html>"""
_PROBE = """<!doctype html><html><head><title>probe</title></head><body><ul id="out"></ul>
<script>
(async function () {
  const out = document.getElementById("out");
  for (const url of new URLSearchParams(location.search).getAll("u")) {
    const li = document.createElement("li");
    li.setAttribute("data-url", url);
    try {
      const r = await fetch(url);
      li.setAttribute("data-result", "ok");
      li.textContent = await r.text();
    } catch (e) {
      li.setAttribute("data-result", "failed");
    }
    out.appendChild(li);
  }
  document.body.setAttribute("data-ready", "1");
})();
</script></body></html>"""


_PRICED = """<!doctype html><html><head><meta charset=utf-8><title>priced</title></head>
<body><h1 class="title">Priced gadget</h1><span class="price">--</span>
<script>
addEventListener("load", async function () {
  const answer = await (await fetch("/js/api/price" + location.search)).json();
  document.querySelector(".price").textContent = answer.price;
  document.body.setAttribute("data-ready", "1");
});
</script></body></html>"""
PLACEHOLDER_PRICE = "--"  # what /js/priced shows before its script runs


_FILL = """function fill(titles) {
  const list = document.getElementById("list");
  for (const title of titles) {
    const li = document.createElement("li");
    li.textContent = title;
    list.appendChild(li);
  }
}"""
_LATE = """addEventListener("load", function () {
  TITLES.forEach(function (title, i) {
    setTimeout(function () { fill([title]); }, DELAY + i * STEP);
  });
});"""
_FETCHED = """addEventListener("load", async function () {
  const items = await (await fetch("/js/api/items" + location.search)).json();
  fill(items.map(function (item) { return item.title; }));
});"""
_TICKING = """setInterval(function () {
  document.getElementById("clock").textContent = new Date().toISOString();
}, 100);"""


def _after_load(title: str, script: str) -> str:
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>after load</title></head>"
        f'<body><h1 class="title">{html.escape(title)}</h1><ul id="list"></ul>'
        f'<p id="clock"></p><script>{_FILL}\n{script}</script></body></html>'
    )


class JsSite:
    """`items` item pages behind a script; see the module doc."""

    def __init__(self, items: int = 5, never: bool = False) -> None:
        self.items = items
        self.never = never
        self._web: SyntheticWeb | None = None

    def install(self, web: SyntheticWeb) -> None:
        self._web = web
        web.add_route(PREFIX, self.handle)

    # ------------------------------------------------------------ expectations
    def url(self, path: str, host: str = JS_HOST) -> str:
        port = self._web.port if self._web is not None else 0
        return f"http://{host}:{port}{path}"

    def seed(self) -> str:
        return self.url(PREFIX)

    @staticmethod
    def item_fields(index: int) -> dict[str, str]:
        return {"title": f"Gadget {index}", "price": f"{10 + index}.99"}

    def item_titles(self) -> list[str]:
        """What LIST_FIELDS extracts as `items` from the pages filled after load."""
        return [self.item_fields(i)["title"] for i in range(self.items)]

    def item_paths(self) -> list[str]:
        return [f"/js/item/{i}" for i in range(self.items)]

    @staticmethod
    def static_paths() -> set[str]:
        """The pages a crawl that does not render fetches: no item is linked."""
        return {"/js/", "/js/static"}

    def rendered_paths(self) -> set[str]:
        """Everything a rendering crawl fetches from JS_HOST (ticks aside)."""
        paths = self.static_paths() | set(self.item_paths())
        paths |= {"/js/app.js", "/js/api/items"}
        paths |= {f"/js/api/item/{i}" for i in range(self.items)}
        if self.never:
            paths.add("/js/never")
        return paths

    # ------------------------------------------------------------------ serving
    async def handle(self, request: web.Request, host: str) -> web.StreamResponse:
        path = request.path
        if path == "/js/":
            return _page(self._home())
        if path == "/js/static":
            return _page(_shell("About", '<p><a href="/js/">home</a></p>', script=False))
        if path == "/js/app.js":
            return web.Response(text=_APP_JS, content_type="application/javascript")
        if path == "/js/api/items":
            wait = request.query.get("wait", "0")  # milliseconds before answering
            if not wait.isdigit():
                return web.Response(status=400, text="wait: milliseconds\n")
            await asyncio.sleep(int(wait) / 1000)
            return web.json_response(self._item_list())
        if path.startswith("/js/api/item/"):
            index = _index(path)
            if index is None:
                return web.Response(status=404, text="no such item")
            return web.json_response(self.item_fields(index))
        if path.startswith("/js/item/") and _index(path) is not None:
            return _page(_shell("", f'<img src="/js/img/{_index(path)}.png">'))
        if path.startswith("/js/img/"):
            return web.Response(body=b"\x89PNG\r\n\x1a\n", content_type="image/png")
        if path == "/js/api/tick":
            return web.Response(text="tick")
        if path == "/js/tracker.js":
            return web.Response(text="window.tracked = 1;", content_type="application/javascript")
        if path == "/js/never":
            return _page(_NEVER)
        if path == "/js/spin":
            return _page(_SPIN)
        if path == "/js/probe":
            return _page(_PROBE)
        if path == "/js/priced":
            return _page(_PRICED)
        if path == "/js/api/price":
            return web.json_response({"price": request.query.get("price", "")})
        after_load = self._after_load(request)
        if after_load is not None:
            return after_load
        if path == "/js/secret":
            return web.Response(text="secret")
        return web.Response(status=404, text="404: Not Found\n")

    def _after_load(self, request: web.Request) -> web.Response | None:
        path = request.path
        if path == "/js/late":
            delay, step = request.query.get("delay", "300"), request.query.get("step", "0")
            if not (delay.isdigit() and step.isdigit()):
                return web.Response(status=400, text="delay, step: milliseconds\n")
            titles = json.dumps(self.item_titles())
            script = _LATE.replace("TITLES", titles).replace("DELAY", delay).replace("STEP", step)
            return _page(_after_load("Late list", script))
        if path == "/js/fetched":
            return _page(_after_load("Fetched list", _FETCHED))
        if path == "/js/ticking":
            return _page(_after_load("Clock", _TICKING))
        return None

    def _home(self) -> str:
        tracker = self.url("/js/tracker.js", THIRD_PARTY_HOST)
        extra = (
            '<p><a href="/js/static">About</a></p>'
            '<img src="/js/img/logo.png">'
            f'<script src="{html.escape(tracker)}"></script>'
            "<noscript>This shop needs JavaScript.</noscript>"
        )
        return _shell("", extra)

    def _item_list(self) -> list[dict[str, str]]:
        items = [
            {"href": f"/js/item/{i}", "title": self.item_fields(i)["title"]}
            for i in range(self.items)
        ]
        if self.never:
            items.append({"href": "/js/never", "title": "never ready"})
        return items


def _index(path: str) -> int | None:
    tail = path.rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _shell(title: str, extra: str, script: bool = True) -> str:
    tag = '<script defer src="/js/app.js"></script>' if script else ""
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>js</title>"
        f'{tag}</head><body><h1 class="title">{html.escape(title)}</h1>'
        f'{extra}<div id="app"></div></body></html>'
    )


def _page(body: str) -> web.Response:
    return web.Response(text=body, content_type=_HTML)


def browser_missing(executable: str = "/usr/bin/chromium") -> str | None:
    """Why rendering tests cannot run here, or None when they can."""
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed (pip install -e '.[render]')"
    if not os.access(executable, os.X_OK):
        return f"no Chromium at {executable} (apt-get install chromium)"
    return None


def probe_path(*urls: str) -> str:
    """The /js/probe path that fetches `urls` from the page."""
    from urllib.parse import urlencode

    return "/js/probe?" + urlencode([("u", u) for u in urls])


def probe_results(rendered_html: str) -> dict[str, str]:
    """url -> "ok" or "failed", read back from a rendered probe page."""
    import lxml.html

    doc = lxml.html.fromstring(rendered_html)
    return {li.get("data-url", ""): li.get("data-result", "") for li in doc.iter("li")}
