"""Runs: one row per command invocation, the provenance every result points back to."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from review.db.base import Base, utcnow


class Run(Base):
    """What ran, with which arguments and tool version, when, and what it changed."""

    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    command: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[dict[str, Any]] = mapped_column(default=dict)
    tool_version: Mapped[str] = mapped_column(String(32))
    signature: Mapped[dict[str, Any]] = mapped_column(default=dict)
    rules_sha256: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="running")  # running|ok|failed|interrupted
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    summary: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    host: Mapped[str | None] = mapped_column(String(255))
    pid: Mapped[int | None]
    # The process's start time (review.claims.ProcessId): a run still "running" whose
    # process is gone is marked interrupted, and a reused pid is not taken for it.
    pid_start: Mapped[str | None] = mapped_column(String(32))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]

    __table_args__ = (Index(None, "command", "started_at"),)
