"""Serve the living news web (news.py) from the command line, to try a
`feeds:` job by hand:

    python -m nadird.testing.news_serve --sites 6 --port 8090

Prints one JSON line (the bound port, the seeds, each site's way of being
found and its period), then serves until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from nadird.testing.graph import SiteGraph
from nadird.testing.living import ScaledClock
from nadird.testing.news import NewsWeb, news_sites
from nadird.testing.web import SyntheticWeb, serve_until_signalled


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m nadird.testing.news_serve", description="Serve the living news web."
    )
    parser.add_argument("--sites", type=int, default=6, help="news-0.test, news-1.test, ...")
    parser.add_argument("--min-period", type=float, default=4.0, help="seconds between articles")
    parser.add_argument("--max-period", type=float, default=25.0)
    parser.add_argument("--backlog", type=int, default=30, help="articles out at the start")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--access-log", default=None, help="append the access log here")
    args = parser.parse_args(argv)
    if args.sites < 1 or not 0 < args.min_period <= args.max_period or args.backlog < 0:
        parser.error("--sites >= 1, 0 < --min-period <= --max-period and --backlog >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    periods = (args.min_period, args.max_period)
    sites = news_sites(args.sites, periods, seed=args.seed, backlog=args.backlog)
    news = NewsWeb(sites, ScaledClock(1.0))
    server = SyntheticWeb(SiteGraph(hosts=1, pages=1), access_log_path=args.access_log)
    news.install(server)

    def describe(port: int) -> dict[str, object]:
        about = [{"host": s.host, "how": s.how, "period": round(s.period, 1)} for s in news.sites]
        return {"port": port, "seeds": news.seeds(), "sites": about}

    return serve_until_signalled(server, args.host, args.port, describe)


if __name__ == "__main__":
    sys.exit(main())
