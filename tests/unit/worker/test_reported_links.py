"""A bag reports each link once, at the least depth it was found."""

from nadird.common.urls import fingerprint
from nadird.protocol.messages import PageResult
from nadird.worker.follow.filter import ReportedLinks


def page(path: str, depth: int, links: list[str]) -> PageResult:
    url = f"http://a.test/{path}"
    urls = [f"http://a.test/{link}" for link in links]
    return PageResult(
        url,
        fingerprint(url),
        url,
        200,
        0.0,
        depth,
        links=urls,
        link_fps=[fingerprint(u) for u in urls],
    )


def paths(result: PageResult) -> list[str]:
    assert [fingerprint(u) for u in result.links] == result.link_fps  # still paired
    return [u.rsplit("/", 1)[1] for u in result.links]


def test_menu_links_go_out_with_the_first_page_only() -> None:
    reported = ReportedLinks()
    assert paths(reported.new_only(page("1", 2, ["home", "about", "p2"]))) == [
        "home",
        "about",
        "p2",
    ]
    assert paths(reported.new_only(page("2", 2, ["home", "p3", "about"]))) == ["p3"]
    assert paths(reported.new_only(page("3", 3, ["home", "p3", "p4"]))) == ["p4"]


def test_a_link_found_again_nearer_the_seed_is_sent_again() -> None:
    # With max_depth the master may have refused it at the larger depth.
    reported = ReportedLinks()
    assert paths(reported.new_only(page("deep", 5, ["x", "y"]))) == ["x", "y"]
    assert paths(reported.new_only(page("shallow", 1, ["x"]))) == ["x"]
    assert paths(reported.new_only(page("deep2", 5, ["x", "y"]))) == []


def test_a_page_without_repeats_is_passed_through_unchanged() -> None:
    reported = ReportedLinks()
    first = page("1", 1, ["a", "b"])
    assert reported.new_only(first) is first
    assert reported.new_only(page("2", 1, [])).links == []
