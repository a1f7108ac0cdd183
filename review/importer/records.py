"""Records for PDFs no harvest knows (`review import pdfs --create`).

Why: any folder of papers can then be reviewed, not only the Anthology. The record is a
paper of source "local" with one `source_records` row (source "local", id = the file's
sha256) whose `raw` keeps where the file came from and where each field was read
(`derived_from`: pdf_metadata, first_page or creation_date), so nobody mistakes a
guessed title for a harvested one. Before creating, the title (with the year, when both
are known) is looked up among existing papers, so the same paper is not made twice.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.db.models import Paper, SourceRecord
from review.harvest.records import LIST_LIMITS, TEXT_LIMITS, HarvestRecord, cap_fields, clean_title, title_key
from review.importer.matcher import Match
from review.log import get_logger

SOURCE = "local"
log = get_logger("import")


def find_by_title(session: Session, meta: dict[str, Any]) -> Match | None:
    """An existing paper with the same normalized title, and the same year and first
    author's surname where both sides know them."""
    key = title_key((meta.get("title") or "")[:TEXT_LIMITS["title"]])  # as a created record would store it
    if not key or len(key.split()) < 3:  # "Introduction" is not an identity
        return None
    mine = _surname(meta.get("authors"))
    for pid, ident, year, authors, crc32, sha256, title in session.execute(
            select(Paper.id, Paper.ident, Paper.year, Paper.authors, Paper.pdf_crc32, Paper.pdf_sha256, Paper.title)
            .where(Paper.title_key == key).order_by(Paper.id)):
        if year is not None and meta.get("year") is not None and year != meta["year"]:
            continue
        theirs = _surname(authors)
        if mine and theirs and mine != theirs:
            continue
        return Match(pid, ident, "title", crc32, sha256, title or "")
    return None


def _capped_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata copy kept in `raw`, cut to the same limits as the record's fields."""
    items, chars = LIST_LIMITS["authors"]
    out = dict(metadata)
    if isinstance(out.get("title"), str):
        out["title"] = out["title"][:TEXT_LIMITS["title"]]
    if isinstance(out.get("authors"), list):
        out["authors"] = [str(a)[:chars] for a in out["authors"][:items]]
    return out


def _surname(authors: Any) -> str | None:
    if not authors:
        return None
    return title_key(str(authors[0]).split()[-1]) if str(authors[0]).split() else None


def create_paper(session: Session, *, sha256: str, meta: dict[str, Any], source: str, member: str,
                 run_id: int | None) -> Match:
    """A new paper (source "local") for this file; its record says what was guessed from where."""
    title = clean_title(meta.get("title")) or member.rsplit("/", 1)[-1]
    derived = dict(meta.get("derived_from") or {})
    if not meta.get("title"):
        derived["title"] = "file_name"
    raw = {"created_by": "review import pdfs --create", "import_source": source, "member": member,
           "sha256": sha256, "derived_from": derived,
           "metadata": {k: meta.get(k) for k in ("title", "authors", "year") if meta.get(k) is not None}}
    if meta.get("error"):
        raw["metadata_error"] = meta["error"]
    rec = HarvestRecord(source=SOURCE, source_id=sha256, ident=f"{SOURCE}-{sha256[:12]}", title=title,
                        year=meta.get("year"), authors=list(meta.get("authors") or []), raw=raw)
    cut = cap_fields(rec)  # a PDF's metadata is as untrusted as an anthology file
    if cut:
        raw["metadata"] = _capped_metadata(raw["metadata"])
        raw["truncated"] = cut
        log.warning("%s: %s cut to the stored limit (original length kept in raw.truncated)",
                    member, ", ".join(f"{k} of {v:,}" for k, v in cut.items()))
    values = rec.paper_values()
    paper = Paper(ident=rec.ident, source=SOURCE, pdf_sha256=sha256, **values)
    paper.records.append(SourceRecord(source=SOURCE, source_id=sha256, raw=raw, content_hash=rec.content_hash(),
                                      run_id=run_id))
    session.add(paper)
    session.flush()
    return Match(paper.id, paper.ident, "created", None, sha256, title)
