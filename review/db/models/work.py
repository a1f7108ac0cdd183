"""The work queue: which item waits for which stage, and who holds it.

Every stage enqueues the items it must process and workers claim batches of them (see
`review.claims`). A claim is a lease: a worker that dies leaves its items to be taken
again once the lease runs out, so a crash never loses or doubles work.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from review.db.base import Base, utcnow


class WorkItem(Base):
    __tablename__ = "work_items"

    id: Mapped[int] = mapped_column(primary_key=True)
    stage: Mapped[str] = mapped_column(String(32))  # download | extract | label | github | scan | ...
    item_id: Mapped[int]  # a papers.id or codebases.id, by stage
    state: Mapped[str] = mapped_column(String(16), default="pending")  # pending|claimed|done|failed
    worker: Mapped[str | None] = mapped_column(String(128))
    lease_until: Mapped[datetime | None]
    attempts: Mapped[int] = mapped_column(default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    __table_args__ = (UniqueConstraint("stage", "item_id"), Index(None, "stage", "state"))
