"""`nadird warc`: a crawl's archive as a WACZ package, or its CDXJ index.

Looking into a WARC file is left to warcio's own commands (`warcio index`,
`warcio check`, `warcio extract`), which do it well.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from nadird.cli.base import SHARED_NO_CONFIG, CommandParser, add_command
from nadird.common.errors import ConfigError

EXIT_FAILED = 1


def add_warc(sub: argparse._SubParsersAction[CommandParser]) -> None:
    warc = add_command(
        sub, "warc", "package a crawl's WARC files (WACZ) or index them (CDXJ)", SHARED_NO_CONFIG
    )
    warc.set_defaults(takes_config=False)
    warc.add_argument(
        "action",
        choices=["pack", "index"],
        help="pack: write DIR's WARC files as one WACZ package (OUT.wacz); "
        "index: write their CDXJ index (OUT, default DIR/index.cdxj)",
    )
    warc.add_argument("dir", metavar="DIR", type=Path, help="the warc: dir (or crawl --warc DIR)")
    warc.add_argument("out", metavar="OUT", type=Path, nargs="?", help="the file to write")


def run_warc(args: argparse.Namespace) -> int:
    from nadird.master.archive.pack import PackError, pack, write_index

    try:
        if args.action == "pack":
            if args.out is None or args.out.suffix != ".wacz":
                raise ConfigError("(command line)", "OUT", f"a .wacz file to write, got {args.out}")
            with tempfile.TemporaryDirectory(prefix="nadird-wacz-") as work:
                pages = pack(args.dir, args.out, Path(work))
            print(json.dumps({"wacz": str(args.out), "pages": pages}))
        else:
            out = args.out or args.dir / "index.cdxj"
            write_index(args.dir, out)
            print(json.dumps({"index": str(out)}))
    except PackError as exc:
        print(f"nadird: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return 0
