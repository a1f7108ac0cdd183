"""Codebases linked to papers, their GitHub look-ups and what scanning them found."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from review.db.base import Base, utcnow


class Codebase(Base):
    """One repository linked to one paper (a paper may have several)."""

    __tablename__ = "codebases"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(Text)  # normalized: https://github.com/owner/name
    host: Mapped[str | None] = mapped_column(String(128))
    owner: Mapped[str | None] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255))
    official: Mapped[bool | None] = mapped_column(Boolean)
    # GitHub look-up (review code github)
    lookup_status: Mapped[str | None] = mapped_column(String(32))  # exists | renamed | deleted | error
    lookup_detail: Mapped[str | None] = mapped_column(Text)
    full_name: Mapped[str | None] = mapped_column(String(255))  # current name after a rename
    default_branch: Mapped[str | None] = mapped_column(String(255))
    stars: Mapped[int | None]
    license: Mapped[str | None] = mapped_column(String(128))
    archived: Mapped[bool | None] = mapped_column(Boolean)
    pushed_at: Mapped[datetime | None]
    looked_up_at: Mapped[datetime | None]
    code_metric_prelim: Mapped[bool | None] = mapped_column("code_rouge_prelim", Boolean)
    searched_at: Mapped[datetime | None]
    # Scan (review code scan)
    scan_outcome: Mapped[str | None] = mapped_column(String(16))  # ok | failed
    scan_reason: Mapped[str | None] = mapped_column(String(64))
    scan_commit: Mapped[str | None] = mapped_column(String(64))
    scan_detail: Mapped[str | None] = mapped_column(Text)  # why a scan failed, or what was skipped
    scan_metric_prelim: Mapped[bool | None] = mapped_column("scan_rouge_prelim", Boolean)  # the checkout mentions the metric's search term
    packages: Mapped[list[str]] = mapped_column(default=list)  # C1 proposal: the packages used for the reported scores
    packages_present: Mapped[list[str]] = mapped_column(default=list)  # in the repository, not producing the scores
    eval_reproducible: Mapped[bool | None] = mapped_column(Boolean)  # automated C2; None: unknown (e.g. truncated)
    eval_reproducible_reason: Mapped[str | None] = mapped_column(Text)  # the conditions that failed, or why unknown
    anti_features: Mapped[list[str]] = mapped_column(default=list)
    scanned_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (UniqueConstraint("paper_id", "url"),)


class CodebaseLink(Base):
    """Where a paper-to-code link came from; one codebase can have several sources."""

    __tablename__ = "codebase_links"

    id: Mapped[int] = mapped_column(primary_key=True)
    codebase_id: Mapped[int] = mapped_column(ForeignKey("codebases.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(32))  # anthology_pwccode | pwc_dump | paper_text
    official: Mapped[bool | None] = mapped_column(Boolean)
    raw: Mapped[dict[str, Any]] = mapped_column(default=dict)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (UniqueConstraint("codebase_id", "source"),)


class CodeFinding(Base):
    """Evidence from a codebase scan: which package, in which file and line."""

    __tablename__ = "code_findings"

    id: Mapped[int] = mapped_column(primary_key=True)
    codebase_id: Mapped[int] = mapped_column(ForeignKey("codebases.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))  # package | anti_feature | condition
    source: Mapped[str | None] = mapped_column(String(32))  # requirements | install | url | import | call | shell | vendored | readme | custom ...
    role: Mapped[str | None] = mapped_column(String(16))  # evaluation | training | unreached | declared | vendored | docs | commented
    reason: Mapped[str | None] = mapped_column(Text)  # why the role (the evaluation path, the failed C2 condition)
    label: Mapped[str] = mapped_column(String(128))
    file: Mapped[str] = mapped_column(Text)
    line: Mapped[int | None]
    text: Mapped[str] = mapped_column(Text)
    rules_sha256: Mapped[str | None] = mapped_column(String(64))
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))

    __table_args__ = (Index(None, "codebase_id"),)
