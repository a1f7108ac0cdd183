"""Human decisions: the only table written from reviewers' work.

Automated stages never write here. A decision is one annotator's answer to one question
(P0-P4, C0-C2, note) about one paper or codebase, with where it came from, so a pull can
be rerun without duplicating and an updated or deleted annotation can be followed. The
answer is stored as given ("can't tell" included); `review.resolution` reads it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from review.db.base import Base, utcnow


class HumanDecision(Base):
    __tablename__ = "human_decisions"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int | None] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    codebase_id: Mapped[int | None] = mapped_column(ForeignKey("codebases.id", ondelete="CASCADE"))
    question: Mapped[str] = mapped_column(String(16))  # P0..P4, C0..C2, note
    answer: Mapped[Any] = mapped_column(JSON)
    annotator: Mapped[str] = mapped_column(String(255))
    annotated_at: Mapped[datetime]
    origin: Mapped[str] = mapped_column(String(255))  # label_studio:<url>#<project> | file:<name> | cli
    task_ref: Mapped[str | None] = mapped_column(String(128))
    annotation_ref: Mapped[str] = mapped_column(String(128))  # the annotation's own id at its origin
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)  # annotation withdrawn at the origin
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    imported_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    __table_args__ = (
        UniqueConstraint("origin", "annotation_ref", "question"),
        Index(None, "paper_id", "question"),
        Index(None, "codebase_id", "question"),
    )
