import random
from urllib.parse import urlsplit

from nadird.config import TrapConfig
from nadird.worker.follow.filter import TrapGuard, _path


def test_the_string_path_matches_urlsplit() -> None:
    rng = random.Random(1)
    pieces = ["/", "a", "?", "#", "=", "b/", ":80", "@"]
    for _ in range(5000):
        url = "http://h.test" + "".join(rng.choice(pieces) for _ in range(rng.randrange(9)))
        assert _path(url) == (urlsplit(url).path or "/"), url


def test_traps_are_refused_and_ordinary_paths_pass() -> None:
    guard = TrapGuard(TrapConfig(max_path_depth=6, max_segment_repeats=2, max_url_length=120))
    assert guard.allows("http://a.test/shop/item/42?x=/a/a/a/a")
    assert not guard.allows("http://a.test/a/b/a/b/a/b")  # 'a' three times
    assert not guard.allows("http://a.test/1/2/3/4/5/6/7")  # deeper than 6
    assert not guard.allows("http://a.test/" + "x" * 200)
