"""The worker's cookie jars: scoped to a job's registrable domain, bounded,
under the request's own cookies; and the fetcher sending and taking them on
every hop of a fetch, against the synthetic web's cookie gate. (aiohttp's
jar wants a running loop: hence the async tests of pure logic.)"""

from __future__ import annotations

import pytest
from support.cookiegate import ANTIBOT, PREFIX, CookieGate
from support.hostile_helpers import fetcher
from yarl import URL

from nadird.common.errors import ConfigError, ErrorKind, FetchError
from nadird.config import config_from_dict
from nadird.config.fetch import CookieJarConfig
from nadird.job.request import parse
from nadird.testing.web import run_in_thread
from nadird.worker.fetch.cookies import MAX_COOKIE_BYTES, CookieJars, DomainJar, cookie_header


async def test_a_jar_takes_and_sends_only_its_own_domains_cookies() -> None:
    jar = DomainJar("shop.test", 8)
    assert jar.store(
        ["a=1; Path=/", "wide=2; Domain=shop.test; Path=/"], URL("http://www.shop.test/x")
    )
    assert not jar.store(["b=1"], URL("http://other.test/"))  # another domain: not kept
    assert jar.cookies_for(URL("http://www.shop.test/y")) == {"a": "1", "wide": "2"}
    # Host-only stays with its host; the domain cookie goes to every host of it.
    assert jar.cookies_for(URL("http://img.shop.test/")) == {"wide": "2"}
    assert jar.cookies_for(URL("http://other.test/")) == {}
    assert not jar.store(["a=1; Path=/"], URL("http://www.shop.test/"))  # nothing changed
    assert jar.store(["a=; Max-Age=0; Path=/"], URL("http://www.shop.test/"))  # deleted
    assert jar.cookies_for(URL("http://www.shop.test/")) == {"wide": "2"}


async def test_a_full_jar_keeps_its_cookies_and_takes_no_new_ones() -> None:
    jar = DomainJar("shop.test", 3)
    url = URL("http://shop.test/")
    jar.store([f"c{i}=v; Path=/" for i in range(3)], url)
    assert jar.store(["c0=new; Path=/", "c9=v; Path=/"], url) is True
    assert jar.cookies_for(url) == {"c0": "new", "c1": "v", "c2": "v"} and jar.refused == 1
    assert len(jar) == 3
    assert not jar.store(["c1=" + "x" * MAX_COOKIE_BYTES], url)  # too big: dropped
    assert jar.cookies_for(url)["c1"] == "v"


async def test_jars_are_per_job_domain_and_account_and_the_oldest_goes() -> None:
    jars = CookieJars(CookieJarConfig(max_jars=2))
    first = jars.jar("a", "shop.test")
    assert jars.jar("a", "shop.test") is first
    assert jars.jar("b", "shop.test") is not first
    assert jars.jar("a", "shop.test", "alice") is not first  # first is now the oldest
    assert len(jars) == 2 and jars.jar("a", "shop.test") is not first


def test_the_requests_own_cookies_win_over_the_jars() -> None:
    assert cookie_header({}, None) is None
    assert cookie_header({"sid": "jar", "acw_tc": "t"}, "sid=session") == "acw_tc=t; sid=session"
    assert cookie_header({"a": "1"}, None) == "a=1"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"fetch": {"cookie_jars": {"max_cookies": 0}}}, "fetch.cookie_jars: max_cookies"),
        ({"jobs": {"j": {"cookie_jar": "yes"}}}, "jobs.j.cookie_jar: expected"),
    ],
)
def test_bad_cookie_settings_are_config_errors(change: dict[str, object], expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_from_dict(change, "m.yaml")
    assert expected in str(caught.value)


async def test_a_fetch_sends_back_what_a_page_and_a_redirect_set() -> None:
    with run_in_thread() as web:
        CookieGate().install(web)
        base = f"http://jar-1.test:{web.port}{PREFIX}"
        jars = CookieJars(CookieJarConfig())
        async with fetcher() as client:
            without = await client.fetch(f"{base}/")
            refused = await client.fetch(f"{base}/gate")
            jar = jars.jar("j", "jar-1.test")
            await client.fetch(f"{base}/", jar=jar)
            # The gate sets acw_tc and sends the client back to itself.
            gated = await client.fetch(f"{base}/gate", jar=jar)
            page = await client.fetch(f"{base}/p/0", jar=jar, request=parse(
                {"url": f"{base}/p/0", "cookies": {"mine": "1"}}
            ))  # fmt: skip
            # Another domain's jar has nothing for it.
            other = await client.fetch(f"{base}/p/0", jar=jars.jar("j", "jar-2.test"))
        entries = web.entries()
    assert (without.status, refused.status) == (200, 403)
    assert gated.status == 200 and gated.redirects == [f"{base}/gate"]
    assert page.status == 200 and b"jar page 0" in page.body
    assert entries[-2].headers["cookie"].endswith("; mine=1")
    assert other.status == 403 and "cookie" not in entries[-1].headers
    assert ANTIBOT in jar.cookies_for(URL(base))


async def test_a_redirect_to_itself_without_a_new_cookie_is_still_a_loop() -> None:
    with run_in_thread() as web:
        CookieGate().install(web)
        base = f"http://jar-1.test:{web.port}{PREFIX}"
        jar = DomainJar("jar-1.test", 8)
        async with fetcher() as client:
            await client.fetch(f"{base}/", jar=jar)
            # The jar is full: the gate's cookie is not kept, so it loops.
            jar.max_cookies = 1
            with pytest.raises(FetchError) as caught:
                await client.fetch(f"{base}/gate", jar=jar)
    assert caught.value.kind == ErrorKind.REDIRECT_LOOP
