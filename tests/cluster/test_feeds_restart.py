"""What a feeds job's master says and keeps, read from outside: real master
and worker processes, /metrics counting a learned hub's articles as `hub`,
and a master restarted between a feed's fetch and its article's still
filling the article from the feed's entry and counting it as `feed`."""

from __future__ import annotations

import asyncio
import email.utils
import signal
import threading
import time

import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families
from test_api import api, request

from nadird.testing.cluster import Cluster, wait_until
from nadird.testing.living import ScaledClock
from nadird.testing.news import NewsSite, NewsWeb
from nadird.testing.web import run_in_thread

pytestmark = pytest.mark.slow

FEEDS = {"revisit": {"adaptive": {"min": "0.5s", "max": "5s", "initial": "0.5s"}}}


def _articles_by_source(cluster: Cluster) -> dict[str, float]:
    url, token = api(cluster)
    status, text = request(url, "/metrics", token)
    assert status == 200
    families = {f.name: f for f in text_string_to_metric_families(text.decode())}
    samples = families["nadird_feed_articles"].samples if "nadird_feed_articles" in families else []
    return {s.labels["source"]: s.value for s in samples if s.name.endswith("_total")}


def test_the_articles_a_learned_hub_names_are_counted_as_hub(cluster: Cluster) -> None:
    # No feed, no hub by address (`hubs: ""`): the home page is a hub only
    # once it has named `learn` new articles (its first fetch, ten of them).
    site = NewsSite("home.test", "home", 1.0, 20, 0.5)
    job = {"feeds": {**FEEDS, "hubs": ""}, "delay": 0.1, "links": {"scope": "same-domain"}}
    with run_in_thread() as server:
        news = NewsWeb([site], ScaledClock(1.0)).install(server)
        seeds = [{"url": url, "job": "news"} for url in news.seeds()]
        cluster.start("master", "master", cluster.master_config(jobs={"news": job}, seeds=seeds))
        cluster.start("worker", "w1", cluster.worker_config(1))
        homes = lambda: sum(e.path == "/" for e in server.entries())  # noqa: E731
        assert wait_until(lambda: homes() >= 4, 30), server.entries()
        time.sleep(1.5)  # the articles the last checks named are fetched
        found = _articles_by_source(cluster)
    # The home page's first fetch made it a hub: what it named then (the
    # newest ten) and since is the hub's; only the older articles the
    # archive and tag pages name are links (and the home page's first fetch,
    # an article until it named them).
    assert found.get("hub", 0) >= 10 + 2, found
    assert found.get("link", 0) <= site.backlog - 10 + 1, found


class SlowArticle:
    """A site whose feed names one article, whose page waits until released
    (a slow host) and states neither title nor date."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.released = threading.Event()
        self.published = time.time() + 3  # after the master first reads the feed

    async def handle(self, request: web.Request, host: str) -> web.Response:
        base = f"http://{host}:{request.url.port}"
        if request.path == "/":
            link = '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
            return web.Response(text=f"<html><head>{link}</head><body>home</body></html>",
                                content_type="text/html")  # fmt: skip
        if request.path == "/feed.xml":
            item = ""
            if time.time() >= self.published:
                date = email.utils.formatdate(self.published, usegmt=True)
                item = (
                    f"<item><title>Budget vote</title><link>{base}/articles/1</link>"
                    f"<pubDate>{date}</pubDate></item>"
                )
            rss = f'<rss version="2.0"><channel><title>News</title>{item}</channel></rss>'
            return web.Response(text=rss, content_type="application/rss+xml")
        if request.path == "/articles/1":
            self.asked.set()
            for _ in range(600):  # at most 30 s
                if self.released.is_set():
                    break
                await asyncio.sleep(0.05)
            return web.Response(text="<html><body><p>The text.</p></body></html>",
                                content_type="text/html")  # fmt: skip
        return web.Response(status=404, text="not found")


def test_a_master_restarted_before_the_article_comes_in_fills_it_from_the_feed(
    cluster: Cluster,
) -> None:
    site = SlowArticle()
    job = {"feeds": FEEDS, "delay": 0.1, "links": {"scope": "same-domain"}}
    with run_in_thread() as server:
        server.add_route("/", site.handle)
        seed = {"url": f"http://slow.test:{server.port}/", "job": "news"}
        config = cluster.master_config(jobs={"news": job}, seeds=[seed])
        master = cluster.start("master", "master", config)
        cluster.start("worker", "w1", cluster.worker_config(1, total_timeout=40.0))
        assert site.asked.wait(30)  # the feed named it; its page is on its way
        master.kill(signal.SIGTERM)
        assert cluster.wait(master, 30) == 0
        (cluster.workdir / "state" / "api.json").unlink()
        cluster.start_again("master", cluster.workdir / "master.yaml")
        site.released.set()

        def article() -> dict[str, object] | None:
            for record in cluster.records():
                if record.url.endswith("/articles/1") and record.status == 200:
                    return record.data
            return None

        assert wait_until(lambda: article() is not None, 30)
        data = article()
        found = _articles_by_source(cluster)
    assert data is not None and data["title"] == "Budget vote"
    assert data["_from_feed"] == ["title", "published"]
    assert found == {"feed": 1.0}  # the restarted master knew what named it
