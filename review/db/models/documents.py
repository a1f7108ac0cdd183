"""PDFs, texts and imported files.

One current PDF per paper (downloaded or imported: `provenance` says which); one text per
paper and text source (the PDF's own extraction is source "pdf"; a full-text corpus such
as ACL OCL is another source, kept beside it); and one ledger row per file an import
looked at, so a rerun goes on where the last one stopped.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Float, ForeignKey, String, Text, UniqueConstraint
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
    # None when downloaded; for an import {"via": "import", "source", "member", "matched_by", ...}
    provenance: Mapped[dict[str, Any] | None]
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    fetched_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class PaperText(Base):
    """A paper's full text from one source, normalized, or why there is none.

    `source` "pdf" is `review extract`'s text of the stored PDF; other sources are
    imported corpora (`review import texts`), e.g. "acl-ocl-grobid" with the corpus
    version in `extractor_version`. Which one labels use is the `label.text_source` setting.
    """

    __tablename__ = "texts"

    id: Mapped[int] = mapped_column(primary_key=True)
    paper_id: Mapped[int] = mapped_column(ForeignKey("papers.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(64), default="pdf", server_default="pdf")
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
    provenance: Mapped[dict[str, Any] | None]  # imported texts: file, corpus version, the corpus's own ids
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    extracted_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    __table_args__ = (UniqueConstraint("paper_id", "source"),)


class ImportedFile(Base):
    """What `review import pdfs` did with one file of a folder or archive.

    Why a ledger: a rerun skips every file it already settled without reading it again,
    and `--json` can list the outcome of each file. `source` is the folder or archive
    (absolute path), `member` the file's name inside it.
    """

    __tablename__ = "import_files"

    id: Mapped[int] = mapped_column(primary_key=True)
    source: Mapped[str] = mapped_column(Text)
    member: Mapped[str] = mapped_column(Text)
    size: Mapped[int | None] = mapped_column(BigInteger)
    outcome: Mapped[str] = mapped_column(String(16))  # matched | created | unmatched | duplicate | corrupt | refused
    reason: Mapped[str | None] = mapped_column(String(64))  # not_pdf, truncated, checksum_mismatch, unsafe_path, ...
    detail: Mapped[str | None] = mapped_column(Text)
    matched_by: Mapped[str | None] = mapped_column(String(32))  # anthology_id, doi, arxiv, sha256, crc32, created
    paper_id: Mapped[int | None] = mapped_column(ForeignKey("papers.id", ondelete="SET NULL"))
    sha256: Mapped[str | None] = mapped_column(String(64))
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    imported_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)

    __table_args__ = (UniqueConstraint("source", "member"),)

