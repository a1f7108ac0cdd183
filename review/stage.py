"""The loop every queue-driven stage shares: claim a batch, process it, record outcomes.

A stage supplies `handle(session, item_id) -> outcome` (a short word such as "ok" or a
failure reason) and gets resumability, exactly-once processing across workers, per-item
error isolation, progress and run counts for free. A handler that raises marks only its
item failed (with the reason logged and stored) and the run goes on.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from review.claims import Held, claim, finish, held_by_others, release, worker_name
from review.db.models import WorkItem
from review.db.session import Database
from review.log import get_logger
from review.progress import progress
from review.runs import RunRecorder

log = get_logger("stage")

Handler = Callable[[Session, int], str]


def pending_count(db: Database, stage: str) -> int:
    with db.session() as s:
        return s.scalar(select(func.count()).select_from(WorkItem)
                        .where(WorkItem.stage == stage, WorkItem.state.in_(("pending", "claimed")))) or 0


def held(db: Database, stage: str, me: str | None = None) -> Held:
    """What other workers still hold of `stage` (for a summary's last clause)."""
    with db.session() as s:
        return held_by_others(s, stage, me)


def drain(db: Database, stage: str, handle: Handler, *, run: RunRecorder | None = None,
          batch: int = 20, limit: int | None = None, describe: str | None = None,
          name: Callable[[int], str] | None = None) -> Counter[str]:
    """Process the stage's queue until it is empty (or `limit` items are done).

    `name` turns an item id into what a reader can look up (review/names.py): a failure logged
    as "item 17" names a row of this database only.
    """
    worker = worker_name()
    outcomes: Counter[str] = Counter()
    total = pending_count(db, stage)
    if limit is not None:
        total = min(total, limit)
    done = 0
    with progress(total, describe or stage) as bar:
        while limit is None or done < limit:
            size = batch if limit is None else min(batch, limit - done)
            with db.session() as s:
                claims = claim(s, stage, worker, size)
            if not claims:
                break
            for i, c in enumerate(claims):
                try:
                    outcome, error = _handle_one(db, handle, c.item_id), None
                except KeyboardInterrupt:
                    with db.session() as s:
                        release(s, claims[i:], worker)
                    raise
                except Exception as exc:  # one bad item must not stop the run
                    outcome, error = "error", f"{type(exc).__name__}: {exc}"
                    log.error("%s: %s failed: %s", stage, _named(name, c.item_id), error)
                with db.session() as s:
                    finish(s, c, worker, error=error)
                outcomes[outcome] += 1
                if run is not None:
                    run.count(outcome)
                done += 1
                bar.advance()
            if run is not None:
                run.checkpoint()
    return outcomes


def _handle_one(db: Database, handle: Handler, item_id: int) -> str:
    with db.session() as s:
        return handle(s, item_id)


def _named(name: Callable[[int], str] | None, item_id: int) -> str:
    """The item's public name; its row number only when naming it fails too."""
    if name is None:
        return f"item {item_id}"
    try:
        return name(item_id)
    except Exception:  # a broken database must not hide the original failure
        return f"item {item_id}"
