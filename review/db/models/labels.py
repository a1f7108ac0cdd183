"""Automated labels: rule files, the findings they produce and per-paper summaries.

Everything here is rewritten by `review label`; nothing here is ever a human decision.
Rows are keyed by rule set, so labels from two rule-file versions live side by side and
`review label --diff` can compare them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from review.db.base import Base, utcnow


class RuleSet(Base):
    """One version of one rule file, identified by the sha256 of its bytes."""

    __tablename__ = "rule_sets"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(128))
    metric: Mapped[str] = mapped_column(String(64))
    version: Mapped[str | None] = mapped_column(String(64))
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    path: Mapped[str | None] = mapped_column(Text)
    content: Mapped[str] = mapped_column(Text)  # the file itself, so old versions stay inspectable
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Finding(Base):
    """One rule match in one paper's text: the evidence behind every automated label."""

    __tablename__ = "findings"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    rule_set_id: Mapped[int] = mapped_column(ForeignKey("rule_sets.id", ondelete="CASCADE"))
    rule_id: Mapped[str] = mapped_column(String(128))
    kind: Mapped[str] = mapped_column(String(32))  # package | protocol | variant | params | flag | code_url
    label: Mapped[str] = mapped_column(String(128))
    start: Mapped[int]
    end: Mapped[int]
    match: Mapped[str] = mapped_column(Text)
    snippet: Mapped[str] = mapped_column(Text)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))

    __table_args__ = (Index(None, "paper_id", "rule_set_id"), Index(None, "rule_set_id", "label"))


class PaperLabel(Base):
    """The automated labels of one paper under one rule set (the `*_prelim` columns)."""

    __tablename__ = "paper_labels"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    rule_set_id: Mapped[int] = mapped_column(ForeignKey("rule_sets.id", ondelete="CASCADE"))
    prelim: Mapped[bool] = mapped_column(Boolean)  # metric named anywhere (paper_metric_prelim)
    computes: Mapped[bool] = mapped_column(Boolean)  # computed-metric flag
    params: Mapped[list[str]] = mapped_column(default=list)
    protocol: Mapped[list[str]] = mapped_column(default=list)
    variants: Mapped[list[str]] = mapped_column(default=list)
    packages: Mapped[list[str]] = mapped_column(default=list)
    code_urls: Mapped[list[str]] = mapped_column(default=list)
    extra: Mapped[dict[str, Any]] = mapped_column(default=dict)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    labeled_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    __table_args__ = (UniqueConstraint("paper_id", "rule_set_id"), Index(None, "rule_set_id"))
