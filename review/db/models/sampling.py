"""The sampling design of a human sample: what makes it known to be random.

`review queue --select sample|stratified` writes one row per distinct draw: the frame it
drew from (every candidate item with its stratum), the items drawn, the seed and the
strata. The estimates (`review.estimate`) trust a human sample only through this row: a
sample queued without one (by an older release) is reported, never taken as random.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from review.db.base import Base, utcnow


class SamplingDesign(Base):
    __tablename__ = "sampling_designs"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # papers | code
    method: Mapped[str] = mapped_column(String(16))  # sample | stratified
    seed: Mapped[int]
    requested: Mapped[int]  # --n: items drawn (sample) or per stratum (stratified)
    strata_by: Mapped[str | None] = mapped_column(String(16))  # year | venue for stratified
    frame: Mapped[list[Any]] = mapped_column(JSON)  # [[item_id, stratum], ...] sorted by item id
    frame_sha256: Mapped[str] = mapped_column(String(64))
    items: Mapped[list[Any]] = mapped_column(JSON)  # the drawn item ids, sorted
    strata: Mapped[dict[str, Any]] = mapped_column(JSON)  # stratum -> [frame size, drawn]
    random: Mapped[bool] = mapped_column(Boolean, default=True)  # False: the draw was cut non-randomly
    queue_order: Mapped[str | None] = mapped_column(String(16))  # the order reviewers meet the items in
    reason: Mapped[str | None] = mapped_column(Text)  # why it is not a random sample
    rule_set: Mapped[str | None] = mapped_column(String(64))  # sha256 of the labels the tasks proposed
    target: Mapped[str | None] = mapped_column(Text)  # the project title or offline file it went to
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (Index(None, "kind", "frame_sha256"),)
