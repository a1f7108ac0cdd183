"""Reproducibility labels: one row per paper, written only by `review compute`.

Each row is derived from human decisions where they exist and automated labels
otherwise (`label_source` says which, `sources` says it per question), so the export can
show exactly what every number rests on. Rerunning compute replaces these rows; it never
touches human decisions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from review.db.base import Base, utcnow


class Reproducibility(Base):
    """R1-R3, software_error and reproducible for one paper, with the inputs they used."""

    __tablename__ = "reproducibility"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), unique=True)
    # The database columns keep the names of the released Rogue Scores dataset (paper_rouge, ...)
    # whatever the metric; the export names them after the metric folder's `column`.
    paper_metric: Mapped[bool | None] = mapped_column("paper_rouge", Boolean)  # P0 (computes the metric)
    paper_metric_prelim: Mapped[bool | None] = mapped_column("paper_rouge_prelim", Boolean)  # preliminary substring search
    paper_params: Mapped[bool | None] = mapped_column(Boolean)  # P1
    params: Mapped[list[str]] = mapped_column(default=list)  # automated parameter strings
    protocol: Mapped[list[str]] = mapped_column(default=list)  # P3
    variants: Mapped[list[str]] = mapped_column(default=list)  # P2
    paper_packages: Mapped[list[str]] = mapped_column(default=list)  # P4, de-aliased
    has_code: Mapped[bool | None] = mapped_column(Boolean)  # C0 (released code, complete or not)
    code_url: Mapped[str | None] = mapped_column(Text)
    code_urls: Mapped[list[str]] = mapped_column(default=list)
    code_metric: Mapped[bool | None] = mapped_column("code_rouge", Boolean)  # C2
    code_metric_prelim: Mapped[bool | None] = mapped_column("code_rouge_prelim", Boolean)
    code_packages: Mapped[list[str]] = mapped_column(default=list)  # C1, de-aliased
    packages: Mapped[list[str]] = mapped_column(default=list)  # paper and code, de-duplicated
    r1: Mapped[bool | None] = mapped_column(Boolean)
    r2: Mapped[bool | None] = mapped_column(Boolean)
    r3: Mapped[bool | None] = mapped_column(Boolean)
    software_error: Mapped[str | None] = mapped_column(String(8))  # true | false | unknown
    reproducible: Mapped[bool | None] = mapped_column(Boolean)
    category: Mapped[str | None] = mapped_column(String(48))  # Figure 3 series
    label_source: Mapped[str] = mapped_column(String(16))  # human | automated | mixed | none
    sources: Mapped[dict[str, Any]] = mapped_column(default=dict)  # question -> human | automated
    rule_set_id: Mapped[int | None] = mapped_column(ForeignKey("rule_sets.id", ondelete="SET NULL"))
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    computed_at: Mapped[datetime] = mapped_column(default=utcnow)

    __table_args__ = (Index(None, "reproducible"),)
