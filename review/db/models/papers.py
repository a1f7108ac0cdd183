"""Papers and the source records they were built from.

A paper is one work; each harvested record (ACL Anthology, DBLP, ...) is a `SourceRecord`
pointing at its paper. A record found in two sources is one paper with two records, so
PRISMA's "records identified" and "duplicates removed" are both plain counts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from review.db.base import Base, utcnow


class Paper(Base):
    """Bibliographic record: the `paper_*` columns of the Rogue Scores dataset and more."""

    __tablename__ = "papers"

    id: Mapped[int] = mapped_column(primary_key=True)
    ident: Mapped[str] = mapped_column(String(255), unique=True)  # paper_ident, e.g. 2021.newsum-1.3
    former_idents: Mapped[list[str]] = mapped_column(default=list)  # idents this paper had before a re-key
    source: Mapped[str] = mapped_column(String(32))  # acl | dblp | local (first source seen)
    url: Mapped[str | None] = mapped_column(Text)  # landing page
    pdf_url: Mapped[str | None] = mapped_column(Text)
    pdf_crc32: Mapped[str | None] = mapped_column(String(8))  # from the anthology `hash` attribute
    pdf_sha256: Mapped[str | None] = mapped_column(String(64))  # expected, when a source gives it
    pdf_unresolved_reason: Mapped[str | None] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text, default="")
    title_key: Mapped[str | None] = mapped_column(String(255))  # normalized title for matching
    authors: Mapped[list[str]] = mapped_column(default=list)
    venue: Mapped[str | None] = mapped_column(String(255))  # main venue id
    venues: Mapped[list[str]] = mapped_column(default=list)
    year: Mapped[int | None]
    month: Mapped[str | None] = mapped_column(String(32))
    booktitle: Mapped[str | None] = mapped_column(Text)
    address: Mapped[str | None] = mapped_column(Text)
    publisher: Mapped[str | None] = mapped_column(Text)
    pages: Mapped[str | None] = mapped_column(String(64))
    doi: Mapped[str | None] = mapped_column(String(255))  # as the source wrote it
    doi_key: Mapped[str | None] = mapped_column(String(255))  # lower case, for matching (DOIs ignore case)
    bibkey: Mapped[str | None] = mapped_column(String(255))
    arxiv_id: Mapped[str | None] = mapped_column(String(64))
    pwc_code: Mapped[list[Any]] = mapped_column(default=list)  # [{url, official}] from the anthology
    removed: Mapped[bool] = mapped_column(Boolean, default=False)
    retracted: Mapped[bool] = mapped_column(Boolean, default=False)
    status_note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    records: Mapped[list[SourceRecord]] = relationship(back_populates="paper", cascade="all, delete-orphan")

    __table_args__ = (
        Index(None, "doi_key"),
        Index(None, "title_key", "year"),
        Index(None, "venue", "year"),
    )


class SourceRecord(Base):
    """One harvested record, kept raw so a later harvester fix can re-derive fields."""

    __tablename__ = "source_records"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), index=True)
    source: Mapped[str] = mapped_column(String(32))
    source_id: Mapped[str] = mapped_column(String(255))
    raw: Mapped[dict[str, Any]] = mapped_column(default=dict)
    content_hash: Mapped[str | None] = mapped_column(String(64))  # detects changed records on re-harvest
    duplicate_reason: Mapped[str | None] = mapped_column(String(64))  # set when matched to another source's paper
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    harvested_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    paper: Mapped[Paper] = relationship(back_populates="records")

    __table_args__ = (UniqueConstraint("source", "source_id"),)
