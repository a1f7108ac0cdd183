"""Write harvested records into papers/source_records: add, update, or attach as duplicate.

Why batches: a full anthology is ~100k records; one transaction per 1,000 records keeps a
crash from losing more than one batch, and bulk INSERT ... RETURNING keeps it fast on
both SQLite and PostgreSQL. A rerun finds each record by (source, source_id): an equal
`content_hash` is `unchanged`, a different one `updated`; never a second row.

Every harvester writes through here, so this is where over-long values are cut to their
stored limit (`records.cap_fields`): the cut is logged, counted (`truncated_<field>`) and
kept in the record's `raw["truncated"]` as {field: original length}.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sqlalchemy import insert, select

from review.db.base import utcnow
from review.db.models import Paper, SourceRecord
from review.db.session import Database
from review.harvest.dedup import DuplicateFinder
from review.harvest.records import DERIVED_FIELDS, MAX_ID, PAPER_FIELDS, HarvestRecord, cap_fields
from review.harvest.result import HarvestResult
from review.log import get_logger

log = get_logger("harvest")

BATCH_SIZE = 1000


class RecordStore:
    """Buffer records of one source and write them batch by batch.

    Use as a context manager (or call `flush()` at the end) so the last batch is written.
    """

    def __init__(self, db: Database, result: HarvestResult, run_id: int | None = None,
                 batch_size: int = BATCH_SIZE, counts: Counter[str] | None = None):
        self.db = db
        self.result = result
        self.run_id = run_id
        self.batch_size = batch_size
        self.counts = counts if counts is not None else Counter()  # truncated_<field>, for the run
        self._buffer: dict[str, HarvestRecord] = {}
        self._seen: set[str] = set()

    def __enter__(self) -> RecordStore:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is None:
            self.flush()

    def add(self, record: HarvestRecord) -> None:
        if len(record.source_id) > MAX_ID or len(record.ident) > MAX_ID:
            self.result.note_failure(f"{record.source_id[:60]}...", f"identifier longer than {MAX_ID} characters")
            log.error("%s record %s...: identifier longer than %d characters; record left out",
                      record.source, record.source_id[:60], MAX_ID)
            return
        if record.source_id in self._seen:
            self.result.repeated += 1
            return
        self._seen.add(record.source_id)
        cut = cap_fields(record)
        if cut:
            record.raw["truncated"] = cut
            self.counts.update(f"truncated_{name}" for name in cut)
            log.warning("%s record %s: %s cut to the stored limit (original length kept in raw.truncated)",
                        record.source, record.source_id, ", ".join(f"{k} of {v:,}" for k, v in cut.items()))
        if record.pdf_url is None:
            self.result.pdf_unresolved += 1
        self._buffer[record.source_id] = record
        if len(self._buffer) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        if not self._buffer:
            return
        batch = list(self._buffer.values())
        self._buffer = {}
        with self.db.session() as s:
            self._write(s, batch)

    # -- internals ----------------------------------------------------------------------

    def _write(self, s: Any, batch: list[HarvestRecord]) -> None:
        source = batch[0].source
        hashes = {r.source_id: r.content_hash() for r in batch}
        existing = {sr.source_id: sr for sr in s.scalars(
            select(SourceRecord).where(SourceRecord.source == source,
                                       SourceRecord.source_id.in_(list(hashes))))}
        changed = [r for r in batch if r.source_id in existing
                   and existing[r.source_id].content_hash != hashes[r.source_id]]
        self.result.unchanged += sum(1 for r in batch if r.source_id in existing) - len(changed)
        if changed:
            papers = {p.id: p for p in s.scalars(
                select(Paper).where(Paper.id.in_([existing[r.source_id].paper_id for r in changed])))}
            shared = set(s.scalars(select(SourceRecord.paper_id).where(
                SourceRecord.paper_id.in_(list(papers)), SourceRecord.source != source)))
            for rec in changed:
                sr = existing[rec.source_id]
                sr.raw, sr.content_hash, sr.run_id = rec.raw, hashes[rec.source_id], self.run_id
                paper = papers[sr.paper_id]
                if sr.duplicate_reason is None and paper.source == source:
                    _overwrite(paper, rec, keep_filled=paper.id in shared)
                else:
                    _fill_missing(paper, rec)
                self.result.updated += 1
        new = [r for r in batch if r.source_id not in existing]
        if not new:
            return
        matches = DuplicateFinder(s, source).match(new)
        if matches:
            papers = {p.id: p for p in s.scalars(
                select(Paper).where(Paper.id.in_([pid for pid, _ in matches.values()])))}
            for rec in new:
                if rec.source_id in matches:
                    pid, reason = matches[rec.source_id]
                    _fill_missing(papers[pid], rec)
                    self.result.duplicates += 1
                    self.result.duplicate_reasons[reason] += 1
        fresh = [r for r in new if r.source_id not in matches]
        paper_ids: dict[str, int] = {}
        if fresh:
            taken = set(s.scalars(select(Paper.ident).where(Paper.ident.in_([r.ident for r in fresh]))))
            rows = []
            for rec in fresh:
                values = rec.paper_values()
                values["ident"] = rec.ident if rec.ident not in taken else f"{source}:{rec.ident}"
                values["source"] = source
                rows.append(values)
            ids = s.scalars(insert(Paper).returning(Paper.id, sort_by_parameter_order=True), rows).all()
            paper_ids = {rec.source_id: pid for rec, pid in zip(fresh, ids)}
            self.result.added += len(fresh)
        now = utcnow()
        s.execute(insert(SourceRecord), [
            {"paper_id": matches[r.source_id][0] if r.source_id in matches else paper_ids[r.source_id],
             "source": source, "source_id": r.source_id, "raw": r.raw, "content_hash": hashes[r.source_id],
             "duplicate_reason": matches[r.source_id][1] if r.source_id in matches else None,
             "run_id": self.run_id, "harvested_at": now, "updated_at": now}
            for r in new])


def _overwrite(paper: Paper, rec: HarvestRecord, keep_filled: bool = False) -> None:
    """The paper's own source changed the record: take its values. With `keep_filled`
    (another source also has this paper) a value that source filled in is not blanked."""
    for name, value in rec.paper_values().items():
        current = getattr(paper, name)
        if current == value or (keep_filled and _empty(value) and not _empty(current)):
            continue
        setattr(paper, name, value)
    if paper.pdf_url:
        paper.pdf_unresolved_reason = None


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value is False


def _fill_missing(paper: Paper, rec: HarvestRecord) -> None:
    """A second source may add what the first lacked (a PDF URL, a DOI, code links), never replace."""
    values = rec.paper_values()
    for name in PAPER_FIELDS:
        if name in ("pdf_unresolved_reason", "title") or name in DERIVED_FIELDS:
            continue
        if _empty(getattr(paper, name)) and not _empty(values[name]):
            setattr(paper, name, values[name])
            for derived, base in DERIVED_FIELDS.items():
                if base == name:
                    setattr(paper, derived, values[derived])
    if paper.pdf_url:
        paper.pdf_unresolved_reason = None
