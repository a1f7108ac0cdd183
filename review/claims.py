"""Hand out work so that concurrent workers never take the same item.

One statement does the claim: `UPDATE work_items SET state='claimed' ... WHERE id IN
(SELECT ... LIMIT n) RETURNING ...`. On PostgreSQL the inner SELECT takes
`FOR UPDATE SKIP LOCKED`, so workers on any number of machines skip each other's rows
instead of waiting. On SQLite the UPDATE holds the database's single write lock for its
whole duration, which makes select-and-mark atomic across processes (WAL plus the busy
timeout make the others wait their turn). Claims are leases: an item whose worker died is
handed out again once `lease_until` passes.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Iterable, Sequence

from sqlalchemy import Select, and_, insert, or_, select, true, update
from sqlalchemy.orm import Session

from review.db.models import WorkItem

DEFAULT_LEASE = timedelta(minutes=30)


def worker_name() -> str:
    """host:pid:random, unique per worker process and readable in `review status`."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


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
    claim to a subset, e.g. `review download --venue acl`.
    """
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


def _chunks(seq: Sequence, size: int):  # type: ignore[no-untyped-def]
    for i in range(0, len(seq), size):
        yield seq[i : i + size]
