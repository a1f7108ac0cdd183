"""Downloaded PDFs and extracted texts: one current row of each per paper."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Float, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from review.db.base import Base, utcnow


class Document(Base):
    """The PDF of a paper in the content-addressed store, or why there is none."""

    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), unique=True)
    url: Mapped[str | None] = mapped_column(Text)
    final_url: Mapped[str | None] = mapped_column(Text)  # after redirects
    path: Mapped[str | None] = mapped_column(Text)  # relative to the data dir: pdfs/ab/cd/<sha256>.pdf
    sha256: Mapped[str | None] = mapped_column(String(64), index=True)
    size: Mapped[int | None] = mapped_column(BigInteger)
    content_type: Mapped[str | None] = mapped_column(String(255))
    http_status: Mapped[int | None]
    etag: Mapped[str | None] = mapped_column(Text)
    last_modified: Mapped[str | None] = mapped_column(String(64))
    outcome: Mapped[str] = mapped_column(String(16))  # ok | failed
    reason: Mapped[str | None] = mapped_column(String(64))  # http_404, not_pdf, checksum_mismatch, ...
    detail: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(default=0)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    fetched_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class PaperText(Base):
    """The full text of a paper's PDF, normalized, or why it could not be extracted."""

    __tablename__ = "texts"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"), unique=True)
    document_sha256: Mapped[str | None] = mapped_column(String(64))  # which PDF this text came from
    content: Mapped[str | None] = mapped_column(Text)
    chars: Mapped[int | None]
    pages: Mapped[int | None]
    extractor: Mapped[str | None] = mapped_column(String(64))
    extractor_version: Mapped[str | None] = mapped_column(String(64))
    normalizer_version: Mapped[str | None] = mapped_column(String(32))
    outcome: Mapped[str] = mapped_column(String(16))  # ok | failed
    reason: Mapped[str | None] = mapped_column(String(64))  # corrupt, encrypted, no_text, timeout, memory, ...
    detail: Mapped[str | None] = mapped_column(Text)
    seconds: Mapped[float | None] = mapped_column(Float)
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    extracted_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

