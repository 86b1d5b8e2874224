"""Long fuzz run of the message decoder, the master's state machine, and a
real master's sockets.

Run before a release (minutes, not seconds):
    python scripts/fuzz_protocol.py --examples 20000 --socket-examples 5000
Any failure prints the smallest failing input hypothesis found. The socket
run starts a master process, sends it hostile messages (nesting depth,
oversized and multipart frames, garbage kinds, forged nodes and leases),
checks that it counted every one as dropped and still answers /healthz, and
reports the frames sent and the master's RSS before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import tempfile
import time
from pathlib import Path

import psutil
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nadird.common.errors import ProtocolError
from nadird.common.logs import configure
from nadird.protocol.codec import decode
from nadird.protocol.messages import Message
from nadird.testing.bad_frames import bad_messages
from nadird.testing.cluster import Cluster
from nadird.testing.frame_sender import Api, Sender, counted, dose, fuzz
from nadird.testing.fuzz import frames, messages, run_script

MB = 1024 * 1024


def in_process(examples: int) -> None:
    common = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )

    @common
    @given(frames | bad_messages(control=True).map(lambda parts: parts[0]))
    def decoder(frame: bytes) -> None:
        with contextlib.suppress(ProtocolError):
            decode(frame)

    @common
    @given(st.lists(st.tuples(st.sampled_from([b"a", b"b", b"c"]), messages), max_size=60))
    def master(script: list[tuple[bytes, Message]]) -> None:
        run_script(script)

    for name, test in (("decoder", decoder), ("master state machine", master)):
        print(f"fuzzing the {name} with {examples} examples...", flush=True)
        test()


def sockets(examples: int, doses: int) -> None:
    """Hostile messages to a master process; raises AssertionError on a miss."""
    print(f"fuzzing a master's sockets with {examples} examples and {doses} doses...")
    with tempfile.TemporaryDirectory() as tmp, Cluster(Path(tmp)) as cluster:
        config = cluster.master_config(master={"exit_when_done": False})
        master = cluster.start("master", "master", config)
        api = Api(cluster)
        sender = Sender(cluster)
        rss = psutil.Process(master.popen.pid).memory_info
        dose(sender, api, rounds=10)  # warm-up: first use of each path
        before, started = rss().rss, time.monotonic()
        warm_frames, warm_messages = sender.frames, sender.sent
        fuzz(sender, examples)
        for _ in range(doses):
            dose(sender, api)
        if not counted(sender, api):
            raise AssertionError(f"dropped {api.stats()['dropped_messages']} of {sender.sent}")
        seconds = time.monotonic() - started
        after = rss().rss
        healthy = api.get("/healthz")[0] == 200
        errors = api.stats().get("handler_errors", 0)
        sender.close()
        master.kill(signal.SIGTERM)
        code = master.popen.wait(60)
    print(
        f"sent {sender.frames - warm_frames} frames in {sender.sent - warm_messages} messages "
        f"(after {warm_messages} to warm up), every message dropped and counted, in "
        f"{seconds:.1f} s; master RSS {before / MB:.0f} MB "
        f"before, {after / MB:.0f} MB after; healthy={healthy}, handler_errors={errors}, "
        f"exit {code}"
    )
    if not healthy or errors or code != 0:
        raise AssertionError("the master did not come through unharmed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=20_000)
    parser.add_argument("--socket-examples", type=int, default=5_000)
    parser.add_argument("--doses", type=int, default=5, help="rounds of 160 oversized/deep")
    args = parser.parse_args()
    configure("fuzz", "fuzz", "error")  # the master warns about every bad message
    if args.examples:
        in_process(args.examples)
    if args.socket_examples or args.doses:
        sockets(args.socket_examples, args.doses)
    print("no failure found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
