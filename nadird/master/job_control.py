"""Pausing, resuming and deleting a job on the running master (API and console)."""

from __future__ import annotations

from nadird.master.frontier.admission import Admission
from nadird.master.frontier.queues import Frontier
from nadird.master.leasing.login_sessions import SessionBook
from nadird.master.revisits.scheduler import Revisits


class JobControl:
    def __init__(
        self,
        admission: Admission,
        frontier: Frontier,
        revisits: Revisits,
        sessions: SessionBook,
        paused: set[str],
    ) -> None:
        self.admission = admission
        self.frontier = frontier
        self.revisits = revisits
        self.sessions = sessions  # replaced by the server's (MasterCore.sessions)
        self.paused = paused  # shared with the Dispatcher, which skips their rows

    def pause(self, job: str) -> None:
        self.paused.add(job)

    def resume(self, job: str) -> None:
        self.paused.discard(job)
        self.sessions.resume(job)

    def delete_job(self, job: str) -> int:
        """Stop a job: no new bags or links; its queued URLs are dropped."""
        self.admission.jobs.pop(job, None)
        self.revisits.policies_changed()  # its rows are parked
        self.paused.discard(job)
        # Revisits whose queue rows go are parked with them: left marked
        # queued, they would never be due again, even if the job came back.
        return self.frontier.drop_job(job, self.revisits.unqueue)
