"""Long fuzz run of the message decoder and the master's state machine.

Run before a release (minutes, not seconds):
    python scripts/fuzz_protocol.py --examples 20000
Any failure prints the smallest failing input hypothesis found.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, "tests")


from nadird.errors import ProtocolError
from nadird.logs import configure
from nadird.protocol.codec import decode
from nadird.protocol.messages import Message
from nadird.testing.fuzz import frames, messages, run_script


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=20_000)
    args = parser.parse_args()
    configure("fuzz", "fuzz", "error")  # the master warns about every bad message
    common = settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )

    @common
    @given(frames)
    def decoder(frame: bytes) -> None:
        with contextlib.suppress(ProtocolError):
            decode(frame)

    @common
    @given(st.lists(st.tuples(st.sampled_from([b"a", b"b", b"c"]), messages), max_size=60))
    def master(script: list[tuple[bytes, Message]]) -> None:
        run_script(script)

    for name, test in (("decoder", decoder), ("master state machine", master)):
        print(f"fuzzing the {name} with {args.examples} examples...", flush=True)
        test()
    print("no failure found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
