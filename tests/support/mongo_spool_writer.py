"""Helper process for test_mongo_outage: holds a MongoStore, writes on cue.

Usage: python mongo_spool_writer.py URI SPOOL_PATH FIRST COUNT

Writes records FIRST.. FIRST+COUNT-1 in batches of 50 each time a line
arrives on stdin, and prints one JSON line per write with the store's spool
state. The test kills it with SIGKILL at a moment of its choosing.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from mongo_helpers import make_store, record

from nadird.common.logs import configure

BATCH = 50


async def main(uri: str, spool: str, first: int, count: int) -> None:
    configure("test", "spool-writer", stream=sys.stderr)  # stdout carries the protocol
    store = make_store(uri, Path(spool).parent, spool_path=spool)
    await store.open()
    print(json.dumps({"event": "open"}), flush=True)
    loop = asyncio.get_running_loop()
    for start in range(first, first + count, BATCH):
        await loop.run_in_executor(None, sys.stdin.readline)
        await store.write([record(i) for i in range(start, min(start + BATCH, first + count))])
        state = {"event": "written", "upto": start + BATCH, "spool": store.spool_records}
        print(json.dumps(state), flush=True)
    await asyncio.Event().wait()  # hold the spool until killed


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
