"""Which of its masters a worker talks to (worker.master as a list).

One at a time, in the order given: the worker is connected to one master's
addresses only, and gives it up for the next (wrapping round) when it has
said nothing for worker.master_timeout since it was chosen, last heard or
last seen holding a live connection (a master starting up: its socket took
the connection, its answer is still to come; service/peer_watch.py). A
master restored on another host is so reached without touching the workers;
a second master on the same replica refuses to start (the replica's
generation, master/state/generation.py), so the list never leads to two live
masters. Decides without I/O: the agent connects and disconnects.
"""

from __future__ import annotations

Endpoint = tuple[str, str]  # (control, results) of one master


class MasterChoice:
    def __init__(self, endpoints: list[Endpoint], timeout: float, now: float) -> None:
        self.endpoints = endpoints
        self.timeout = timeout
        self.index = 0
        self.chosen_at = now
        self._connected_at = now  # last seen holding a live connection

    @property
    def current(self) -> Endpoint:
        return self.endpoints[self.index]

    def give_up(self, now: float, last_heard: float, connected: bool = False) -> bool:
        """Whether the master in use has been silent too long and another is
        listed. `connected`: the worker holds a live connection to it (it is
        there, starting or busy): that counts as not silent."""
        if len(self.endpoints) < 2:
            return False  # the only one: wait for it (ZeroMQ reconnects)
        if connected:
            self._connected_at = now
        return now - max(last_heard, self.chosen_at, self._connected_at) >= self.timeout

    def next(self, now: float) -> Endpoint:
        self.index = (self.index + 1) % len(self.endpoints)
        self.chosen_at = now
        return self.current
