"""Hand out work so that concurrent workers never take the same item.

One statement does the claim: `UPDATE work_items SET state='claimed' ... WHERE id IN
(SELECT ... LIMIT n) RETURNING ...`. On PostgreSQL the inner SELECT takes
`FOR UPDATE SKIP LOCKED`, so workers on any number of machines skip each other's rows
instead of waiting. On SQLite the UPDATE holds the database's single write lock for its
whole duration, which makes select-and-mark atomic across processes (WAL plus the busy
timeout make the others wait their turn). Claims are leases: an item whose worker died is
handed out again once `lease_until` passes.

Liveness is one rule, applied here for every queued stage: a worker is named after its
process (`host:pid@start:random`, see `ProcessId`). A claim whose worker was a process
on this machine that is no longer running is handed back at the next claim, at once; a
worker on another machine cannot be checked from here, so its claims wait for the lease.
`held_by_others` says what is still held, by whom and until when, for summaries and
`review status`.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Iterable, Sequence

from sqlalchemy import Select, and_, func, insert, or_, select, true, update
from sqlalchemy.orm import Session

from review.db.models import WorkItem
from review.log import get_logger

DEFAULT_LEASE = timedelta(minutes=30)
log = get_logger("claims")


@dataclass(frozen=True)
class ProcessId:
    """A process, told apart from a later one that reuses its pid.

    `start` is the kernel's start time of the process (clock ticks since boot, from
    /proc): after a container restart the same pid often comes back, and without it
    a dead worker would pass for the new, live process. None where /proc is missing.
    """

    host: str
    pid: int
    start: str | None = None

    def __str__(self) -> str:
        return f"{self.host}:{self.pid}" + (f"@{self.start}" if self.start else "")

    @classmethod
    def parse(cls, name: str | None) -> "ProcessId | None":
        """The process of a worker name (`host:pid[@start][:...]`); None for other names."""
        host, _, rest = (name or "").partition(":")
        pid_text, _, start = rest.partition(":")[0].partition("@")
        if not host or not pid_text.isdigit():
            return None
        return cls(host, int(pid_text), start or None)

    @property
    def local(self) -> bool:
        return self.host == socket.gethostname()

    def gone(self) -> bool:
        """True only when this is a process of this machine that no longer runs.

        A process elsewhere cannot be checked from here: False (its lease decides).
        A zombie (killed, not yet reaped) counts as gone.
        """
        if not self.local:
            return False
        stat = _proc_stat(self.pid)
        if stat is None:
            return not _pid_exists(self.pid)
        state, start = stat
        return state in ("Z", "X") or (self.start is not None and start != self.start)


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of a process from /proc; None when /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:  # no such process, no /proc, or hidden (hidepid): kill(pid, 0) decides
        return None
    fields = text[text.rfind(")") + 2:].split()  # the command name may hold spaces and parentheses
    return (fields[0], fields[19]) if len(fields) > 19 else None


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def this_process() -> ProcessId:
    stat = _proc_stat(os.getpid())
    return ProcessId(socket.gethostname(), os.getpid(), stat[1] if stat else None)


def worker_name() -> str:
    """host:pid@start:random, unique per worker and readable in `review status`."""
    return f"{this_process()}:{uuid.uuid4().hex[:6]}"


def worker_gone(name: str | None) -> bool:
    """The liveness rule: a worker is gone when its process on this machine has ended."""
    process = ProcessId.parse(name)
    return process is not None and process.gone()


@dataclass(frozen=True)
class Claim:
    work_id: int
    item_id: int
    attempts: int


def enqueue(session: Session, stage: str, item_ids: Iterable[int], *, requeue_failed: bool = False) -> int:
    """Add items to a stage's queue; items already queued are left as they are.

    With `requeue_failed`, items that failed before go back to pending (`--retry-failed`).
    Returns how many items became pending.
    """
    ids = sorted(set(item_ids))
    if not ids:
        return 0
    existing: dict[int, str] = {}
    for chunk in _chunks(ids, 5000):
        rows = session.execute(
            select(WorkItem.item_id, WorkItem.state).where(WorkItem.stage == stage, WorkItem.item_id.in_(chunk))
        )
        existing.update({item_id: state for item_id, state in rows})
    new = [{"stage": stage, "item_id": i, "state": "pending"} for i in ids if i not in existing]
    for chunk in _chunks(new, 5000):
        session.execute(insert(WorkItem), chunk)
    changed = len(new)
    if requeue_failed:
        failed = [i for i, state in existing.items() if state == "failed"]
        for chunk in _chunks(failed, 5000):
            session.execute(
                update(WorkItem)
                .where(WorkItem.stage == stage, WorkItem.item_id.in_(chunk))
                .values(state="pending", worker=None, lease_until=None)
            )
        changed += len(failed)
    return changed


def claim(session: Session, stage: str, worker: str, limit: int, *, lease: timedelta = DEFAULT_LEASE,
          among: Select | None = None) -> list[Claim]:
    """Atomically take up to `limit` pending (or abandoned) items of `stage` and commit.

    The commit is part of the claim: the lease must be visible to other workers before the
    caller starts the (possibly long) work. `among` (a SELECT of item ids) narrows the
    claim to a subset, e.g. `review download --venue acl`. Items of workers that are gone
    (see `worker_gone`) are handed back first, so a rerun right after a kill takes them.
    """
    release_gone(session, stage)
    now = datetime.now(timezone.utc)
    available = or_(WorkItem.state == "pending",
                    and_(WorkItem.state == "claimed", WorkItem.lease_until < now))
    inner = (
        select(WorkItem.id)
        .where(WorkItem.stage == stage, available)
        .where(WorkItem.item_id.in_(among) if among is not None else true())
        .order_by(WorkItem.id)
        .limit(limit)
    )
    if session.get_bind().dialect.name == "postgresql":
        inner = inner.with_for_update(skip_locked=True)
    stmt = (
        update(WorkItem)
        .where(WorkItem.id.in_(inner.scalar_subquery()))
        .values(state="claimed", worker=worker, lease_until=now + lease, attempts=WorkItem.attempts + 1)
        .returning(WorkItem.id, WorkItem.item_id, WorkItem.attempts)
        .execution_options(synchronize_session=False)
    )
    rows = session.execute(stmt).all()
    session.commit()
    return [Claim(work_id=r[0], item_id=r[1], attempts=r[2]) for r in sorted(rows)]


def finish(session: Session, claims: Sequence[Claim] | Claim, worker: str, *, error: str | None = None) -> int:
    """Mark claimed items done (or failed with `error`); only the claim holder may.

    Returns how many rows this worker still held: 0 means the lease had expired and
    another worker took the item over, so the caller's result must not be counted twice.
    """
    if isinstance(claims, Claim):
        claims = [claims]
    ids = [c.work_id for c in claims]
    if not ids:
        return 0
    result = session.execute(
        update(WorkItem)
        .where(WorkItem.id.in_(ids), WorkItem.worker == worker, WorkItem.state == "claimed")
        .values(state="failed" if error else "done", last_error=error, lease_until=None)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount or 0


def release(session: Session, claims: Sequence[Claim], worker: str) -> None:
    """Give unfinished items back (on Ctrl-C), so the next run takes them at once."""
    ids = [c.work_id for c in claims]
    if ids:
        session.execute(
            update(WorkItem)
            .where(WorkItem.id.in_(ids), WorkItem.worker == worker, WorkItem.state == "claimed")
            .values(state="pending", worker=None, lease_until=None)
            .execution_options(synchronize_session=False)
        )


def release_gone(session: Session, stage: str) -> int:
    """Hand back the claims of workers whose process on this machine has ended; how many."""
    holders = session.scalars(select(WorkItem.worker).distinct()
                              .where(WorkItem.stage == stage, WorkItem.state == "claimed")).all()
    gone = [w for w in holders if worker_gone(w)]
    if not gone:
        return 0
    result = session.execute(
        update(WorkItem)
        .where(WorkItem.stage == stage, WorkItem.state == "claimed", WorkItem.worker.in_(gone))
        .values(state="pending", worker=None, lease_until=None)
        .execution_options(synchronize_session=False))
    n = result.rowcount or 0
    if n:
        log.info("%s: took back %d item(s) held by %s, no longer running",
                 stage, n, ", ".join(sorted(str(ProcessId.parse(w)) for w in gone)))
    return n


@dataclass(frozen=True)
class Held:
    """Items of a stage claimed by workers other than the caller, still within their lease."""

    items: int = 0
    workers: int = 0
    until: datetime | None = None  # the latest lease end: by then every item is free again
    abandoned: int = 0  # workers gone or leases run out: the next claim takes them

    def note(self) -> str:
        """'' or a clause for a stage's summary line."""
        parts = []
        if self.items:
            until = f", until {format_time(self.until)} at the latest" if self.until else ""
            parts.append(f"{self.items} still held by {self.workers} other worker{'s' if self.workers != 1 else ''}"
                         f"{until}")
        if self.abandoned:
            parts.append(f"{self.abandoned} abandoned by stopped workers (the next run takes them)")
        return "; ".join(parts)

    def as_dict(self) -> dict[str, object]:
        return {"items": self.items, "workers": self.workers, "abandoned": self.abandoned,
                "until": _aware(self.until).isoformat() if self.until else None}


def held_by_others(session: Session, stage: str, me: str | None = None) -> Held:
    """What other workers still hold in `stage`, by the liveness rule (see the module doc)."""
    rows = session.execute(
        select(WorkItem.worker, func.count(), func.max(WorkItem.lease_until))
        .where(WorkItem.stage == stage, WorkItem.state == "claimed")
        .group_by(WorkItem.worker)).all()
    now = datetime.now(timezone.utc)
    items = workers = abandoned = 0
    until: datetime | None = None
    for worker, n, lease in rows:
        if worker == me:
            continue
        if worker_gone(worker) or (lease is not None and _aware(lease) < now):
            abandoned += n
            continue
        items, workers = items + n, workers + 1
        if lease is not None and (until is None or _aware(lease) > until):
            until = _aware(lease)
    return Held(items, workers, until, abandoned)


def format_time(when: datetime) -> str:
    return _aware(when).strftime("%Y-%m-%d %H:%M UTC")


def _aware(when: datetime) -> datetime:
    """SQLite gives back naive datetimes; every time stored here is UTC."""
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def _chunks(seq: Sequence, size: int):  # type: ignore[no-untyped-def]
    for i in range(0, len(seq), size):
        yield seq[i : i + size]
