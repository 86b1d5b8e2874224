"""Login sessions kept by the master, per (job, domain) and account, handed
out with every bag of that domain like its lease: the worker holding the
domain is the one that logs in, so the cluster shares one login per account.

A worker reports the sessions in BagDone (accepted only from the lease's
holder, as the bag's results are). A report replaces a session only with a
higher version, so a worker that used an older one cannot undo a renewal.

Failed logins in a row rest the domain 1, 2, 4... seconds; at the job's
`login.max_failures` the domain pauses (`login_failed` in the status, logged
once) for `login.pause` seconds or until resumed (API resume of the job,
SIGHUP). `nadird_login_failures` on /metrics counts every failed login.

Sessions survive a master restart in `sessions.json` in the state directory,
mode 0600. Cookie values and tokens appear nowhere else: not in the status,
the logs, the store or the metrics.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from nadird.common.logs import get_logger
from nadird.job.login import LoginSpec
from nadird.master.frontier.seen import write_atomic
from nadird.protocol.messages import BagDone, SessionNote

log = get_logger()

FILE_NAME = "sessions.json"
PAUSED_REST = 2.0


@dataclass
class DomainLogin:
    """One (job, domain)'s sessions and login failures."""

    notes: dict[str, SessionNote] = field(default_factory=dict)
    free_at: dict[str, float] = field(default_factory=dict)  # monotonic, per account
    failures: int = 0  # failed logins in a row
    paused_until: float = 0.0  # monotonic; 0: not paused
    error: str = ""


class SessionBook:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.domains: dict[tuple[str, str], DomainLogin] = {}
        self.failures = 0  # failed logins reported, all domains (the metric)
        self.logins = 0  # new sessions accepted
        self.stale = 0  # session reports older than the master's
        if path is not None:
            self._load(path)

    @classmethod
    def in_state_dir(cls, directory: Path) -> SessionBook:
        return cls(directory / FILE_NAME)

    def for_bag(self, job: str, domain: str, now: float) -> list[SessionNote]:
        """The sessions a bag of the domain carries, with each account's rest."""
        entry = self.domains.get((job, domain))
        if entry is None:
            return []
        return [
            SessionNote(n.account, n.version, n.cookies, n.token, _rest(entry, n.account, now))
            for n in entry.notes.values()
        ]

    def paused(self, job: str, domain: str, now: float) -> bool:
        entry = self.domains.get((job, domain))
        return entry is not None and entry.paused_until > now

    def reported(self, job: str, domain: str, msg: BagDone, spec: LoginSpec, now: float) -> float:
        """Take a bag's sessions and failed logins; the seconds the domain rests."""
        entry = self.domains.setdefault((job, domain), DomainLogin())
        changed = False
        for note in msg.sessions:
            entry.free_at[note.account] = now + max(0.0, note.rest)
            held = entry.notes.get(note.account)
            if held is not None and held.version >= note.version:
                self.stale += held.version > note.version
                continue
            entry.notes[note.account] = SessionNote(
                note.account, note.version, note.cookies, note.token
            )
            self.logins += 1
            changed = True
        if changed and not msg.login_failures:
            entry.failures, entry.error = 0, ""
        if changed:
            self._save()
        if not msg.login_failures:
            return 0.0
        return self._failed(job, domain, entry, msg, spec, now)

    def _failed(
        self, job: str, domain: str, entry: DomainLogin, msg: BagDone, spec: LoginSpec, now: float
    ) -> float:
        self.failures += msg.login_failures
        entry.failures += msg.login_failures
        entry.error = msg.login_error[:500]
        if entry.failures < spec.max_failures:
            return float(min(spec.pause, 2 ** (entry.failures - 1)))
        if entry.paused_until <= now:  # logged once per pause
            log.error(
                "login_paused",
                job=job,
                domain=domain,
                failures=entry.failures,
                error=entry.error,
                pause=spec.pause,
            )
        entry.paused_until = now + spec.pause
        # Dispatch holds the paused domain (paused()); a short rest here lets
        # a resume take effect at once.
        return min(spec.pause, PAUSED_REST)

    def resume(self, job: str | None = None) -> int:
        """End the pauses (of one job, or all): the next login is tried again."""
        resumed = 0
        for (name, _domain), entry in self.domains.items():
            if (job is None or name == job) and entry.paused_until:
                entry.paused_until, entry.failures = 0.0, 0
                resumed += 1
        return resumed

    def status(self, now: float) -> dict[str, dict[str, Any]]:
        """Per job/domain: state, accounts with a session, failures. No secret."""
        report = {}
        for (job, domain), entry in sorted(self.domains.items()):
            paused = entry.paused_until > now
            state = "login_failed" if paused else ("ok" if entry.notes else "no_session")
            item: dict[str, Any] = {
                "state": state,
                "accounts": sorted(entry.notes),
                "versions": {a: n.version for a, n in sorted(entry.notes.items())},
                "failures": entry.failures,
            }
            if entry.error:
                item["error"] = entry.error
            if paused:
                item["resumes_in"] = round(entry.paused_until - now, 1)
            report[f"{job}/{domain}"] = item
        return report

    # --------------------------------------------------------------- file
    def _save(self) -> None:
        """Write the sessions (not the pauses: a restart tries again) to a
        0600 file beside the frontier, atomically."""
        if self.path is None:
            return
        data = [
            {"job": job, "domain": domain, "notes": [asdict(n) for n in entry.notes.values()]}
            for (job, domain), entry in self.domains.items()
            if entry.notes
        ]
        try:
            write_atomic(self.path, json.dumps(data).encode(), mode=0o600)
        except OSError as exc:  # kept in memory: a restart then logs in again
            log.warning("sessions_not_saved", file=str(self.path), error=exc.strerror)

    def _load(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            for item in data:
                entry = self.domains.setdefault((item["job"], item["domain"]), DomainLogin())
                for raw in item["notes"]:
                    note = SessionNote(**{**raw, "rest": 0.0})
                    entry.notes[note.account] = note
        except FileNotFoundError:
            return
        except (OSError, ValueError, TypeError, KeyError) as exc:
            # A cache of logins: losing it costs one login per account.
            log.warning("sessions_unreadable", file=str(path), error=str(exc)[:200])
            self.domains.clear()


def _rest(entry: DomainLogin, account: str, now: float) -> float:
    free = entry.free_at.get(account)
    return round(max(0.0, free - now), 3) if free is not None else 0.0
