"""Which of its masters a worker talks to (worker.master as a list).

One at a time, in the order given: the worker is connected to one master's
addresses only, and gives it up for the next (wrapping round) when it has
said nothing for worker.master_timeout since it was chosen or last heard. A
master restored on another host is so reached without touching the workers;
a second master on the same replica refuses to start (the replica's
generation, master/state/generation.py), so the list never leads to two live
masters. Decides without I/O: the agent connects and disconnects.
"""

from __future__ import annotations

Endpoint = tuple[str, str]  # (control, results) of one master


MAX_ROUNDS_BACKOFF = 3  # the wait doubles each round none answered, up to 8 times


class MasterChoice:
    def __init__(self, endpoints: list[Endpoint], timeout: float, now: float) -> None:
        self.endpoints = endpoints
        self.timeout = timeout
        self.index = 0
        self.chosen_at = now
        self.unanswered = 0  # switches since a master was last heard
        self._heard_at = now

    @property
    def current(self) -> Endpoint:
        return self.endpoints[self.index]

    def give_up(self, now: float, last_heard: float) -> bool:
        """Whether the master in use has been silent too long and another is listed."""
        if len(self.endpoints) < 2:
            return False  # the only one: wait for it (ZeroMQ reconnects)
        if last_heard > self._heard_at:
            self._heard_at, self.unanswered = last_heard, 0
        return now - max(last_heard, self.chosen_at) >= self.wait()

    def wait(self) -> float:
        """How long the one in use may stay silent: longer each round of the
        list that none answered, so that a master slow to start (a restore,
        its state loading) is not left just before it answers."""
        rounds = min(self.unanswered // len(self.endpoints), MAX_ROUNDS_BACKOFF)
        return self.timeout * float(2**rounds)

    def next(self, now: float) -> Endpoint:
        self.index = (self.index + 1) % len(self.endpoints)
        self.chosen_at = now
        self.unanswered += 1
        return self.current
