"""Bookkeeping of the human verification pass (Label Studio projects, tasks, resolutions).

Nothing here is a human answer (those are `HumanDecision` rows); these tables remember
what was queued where, so reruns never duplicate tasks, and what the reviewers' answers
resolve to (majority, tie, adjudication), recomputed from the decisions on every pull.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from review.db.base import Base, utcnow


class HumanProject(Base):
    """One Label Studio project (or offline export) that tasks were queued into.

    A server is known by what it is, not by how its URL was typed: `url` is normalized
    (scheme, lower-case host, loopback names as one, no default port or trailing slash)
    and `server_id` is the server's own identity (its organization's id and creation
    time), so the same server under another spelling finds its projects, and a project
    is matched by its id and its creation time (`remote_created`). A project deleted in
    Label Studio is marked gone (`gone_at`, `gone_reason`); its decisions stay.
    """

    __tablename__ = "human_projects"

    id: Mapped[int] = mapped_column(primary_key=True)
    origin: Mapped[str] = mapped_column(String(255), unique=True)  # label_studio:<url>#<id> | file:<name>
    url: Mapped[str | None] = mapped_column(Text)  # Label Studio base URL, normalized (never a key)
    server_id: Mapped[str | None] = mapped_column(String(255))  # the server's identity (organization)
    project_id: Mapped[int | None]  # the project's id in Label Studio
    remote_created: Mapped[str | None] = mapped_column(String(64))  # the project's created_at in Label Studio
    title: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(16))  # papers | code
    purpose: Mapped[str] = mapped_column(String(16), default="review")  # review | adjudication
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_pulled_at: Mapped[datetime | None]
    gone_at: Mapped[datetime | None]  # when a pull found it deleted (or a duplicate of another row)
    gone_reason: Mapped[str | None] = mapped_column(Text)


class HumanTask(Base):
    """One paper or codebase queued as one task; the key that keeps reruns from duplicating."""

    __tablename__ = "human_tasks"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_ref: Mapped[int] = mapped_column(ForeignKey("human_projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))  # papers | code
    item_id: Mapped[int]  # papers.id or codebases.id, by kind
    task_id: Mapped[int | None]  # Label Studio task id (None for offline exports)
    model_version: Mapped[str | None] = mapped_column(String(128))  # rule file sha256 of the prediction
    queued_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))

    __table_args__ = (UniqueConstraint("project_ref", "item_id"), Index(None, "kind", "item_id"))


class HumanResolution(Base):
    """What the reviewers' answers to one question about one item resolve to."""

    __tablename__ = "human_resolutions"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # papers | code
    item_id: Mapped[int]
    question: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))  # single | agreed | majority | tie | unsure | adjudicated
    answer: Mapped[Any | None] = mapped_column(JSON)
    votes: Mapped[list[Any]] = mapped_column(default=list)  # [{answer, count, annotators}]
    reviewers: Mapped[int] = mapped_column(default=0)
    needs_adjudication: Mapped[bool] = mapped_column(Boolean, default=False)
    resolved_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))

    __table_args__ = (UniqueConstraint("kind", "item_id", "question"), Index(None, "needs_adjudication"))
