"""Record every command as a run row, whatever happens to it.

The row is written in its own short transactions, so it survives the command's own
rollback: a crash leaves `failed` with the error, Ctrl-C leaves `interrupted`, and the
counts gathered so far are kept. Stages add to `run.counts` and set `run.summary`.
A process killed outright (SIGKILL, power loss) cannot close its row: the row names its
process (host, pid, start time), and the next run on that machine marks it
`interrupted` once that process is gone (`close_gone_runs`, the liveness rule of
review.claims).
"""

from __future__ import annotations

import socket
from collections import Counter
from contextlib import contextmanager
from typing import Any, Iterator

from sqlalchemy import select
from sqlalchemy.orm import Session

from review import __version__
from review.claims import ProcessId, this_process
from review.db.base import utcnow
from review.db.models import Run
from review.db.session import Database
from review.signature import Signature


class RunRecorder:
    """The live handle a stage uses: counts, summary, signature fields."""

    def __init__(self, db: Database, run_id: int, signature: Signature):
        self.db = db
        self.id = run_id
        self.counts: Counter[str] = Counter()
        self.summary: str | None = None
        self.signature = signature
        self.rules_sha256: str | None = None

    def count(self, key: str, n: int = 1) -> None:
        self.counts[key] += n

    def checkpoint(self) -> None:
        """Save the counts so far (long stages call this now and then)."""
        self._save(status="running")

    def _save(self, status: str, error: str | None = None, finished: bool = False) -> None:
        with self.db.session() as s:
            run = s.get(Run, self.id)
            if run is None:
                return
            run.status = status
            run.counts = dict(self.counts)
            run.summary = self.summary
            run.rules_sha256 = self.rules_sha256
            self.signature.finished = True
            run.signature = self.signature.as_dict()
            if error:
                run.error = error[:4000]
            if finished:
                run.finished_at = utcnow()


@contextmanager
def record_run(db: Database, command: str, arguments: dict[str, Any] | None = None) -> Iterator[RunRecorder]:
    """Open a run row, yield its recorder, and close it with the right status."""
    me = this_process()
    with db.session() as s:
        close_gone_runs(s)
        run = Run(command=command, arguments=_jsonable(arguments or {}), tool_version=__version__,
                  host=me.host, pid=me.pid, pid_start=me.start, status="running")
        s.add(run)
        s.flush()
        run_id = run.id
    recorder = RunRecorder(db, run_id, Signature())
    try:
        yield recorder
    except KeyboardInterrupt:
        recorder._save("interrupted", error="interrupted by the user", finished=True)
        raise
    except BaseException as exc:
        recorder._save("failed", error=f"{type(exc).__name__}: {exc}", finished=True)
        raise
    else:
        recorder._save("ok", finished=True)


def run_process_gone(run: Run) -> bool:
    """Whether a `running` row's process is known to have ended (only on this machine)."""
    return run.status == "running" and run.host is not None and run.pid is not None and \
        ProcessId(run.host, run.pid, run.pid_start).gone()


def close_gone_runs(session: Session) -> int:
    """Mark `interrupted` the runs of this machine whose process ended without closing them."""
    n = 0
    for run in session.scalars(select(Run).where(Run.status == "running", Run.host == socket.gethostname())):
        if run_process_gone(run):
            run.status = "interrupted"
            run.error = (f"the process ({ProcessId(run.host, run.pid, run.pid_start)}) ended without closing "
                         f"this run (killed?); noticed at {utcnow():%Y-%m-%d %H:%M} UTC")
            n += 1
    return n


def _jsonable(arguments: dict[str, Any]) -> dict[str, Any]:
    return {k: (v if isinstance(v, (str, int, float, bool, type(None), list)) else str(v)) for k, v in arguments.items()}
