"""`review extract`: every downloaded PDF becomes one normalized text row.

Work comes from the backbone's queue (stage "extract", item = paper id), so a rerun
resumes where the last one stopped and several `review extract` processes, on one
machine or many, never take the same paper. Within a process, `workers` child
processes (default: one per core) extract in parallel under a time limit and a memory
cap (isolate.py); the parent alone talks to the database.

Outcomes: a `texts` row per paper, `ok` with the text, or `failed` with the reason
(encrypted, corrupt, no_text, timeout, memory, crash, missing). Failed items are left
`failed` in the queue so `--retry-failed` can try them again (with other limits).
A paper whose PDF changed since its text was made (another sha256) is queued again.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError

from review.claims import Claim, Held, claim, enqueue, finish, release, worker_name
from review.db.models import Document, PaperText, WorkItem
from review.db.session import Database
from review.errors import ConfigError
from review.extract.backends import BACKENDS
from review.extract.core import Extraction
from review.extract.isolate import WorkerPool
from review.log import get_logger
from review.names import paper_name_of
from review.progress import progress
from review.runs import RunRecorder
from review.stage import held as held_elsewhere
from review.stage import pending_count

STAGE = "extract"
PDF_SOURCE = "pdf"  # this stage's texts; imported corpora are other sources beside them
log = get_logger("extract")
DROPPED_WORDS = {"cid": "(cid:NN) placeholders", "latexit": "latexit blobs",
                 "outside_crop": "characters outside crop boxes"}


@dataclass
class ExtractReport:
    outcomes: Counter[str] = field(default_factory=Counter)
    pages: int = 0
    seconds: float = 0.0  # wall clock of the extraction loop
    queued: int = 0
    backend: str = ""
    workers: int = 0
    held: Held = field(default_factory=Held)  # what other extract workers still hold
    dropped: Counter[str] = field(default_factory=Counter)  # left out of the texts, by kind (Extraction.dropped)

    @property
    def ok(self) -> int:
        return self.outcomes.get("ok", 0)

    @property
    def failed(self) -> int:
        return sum(n for k, n in self.outcomes.items() if k != "ok")

    @property
    def summary(self) -> str:
        reasons = ", ".join(f"{k} {n}" for k, n in sorted(self.outcomes.items()) if k != "ok")
        rate = f", {self.pages / self.seconds:.1f} pages/s" if self.seconds > 0 else ""
        held = f"; {self.held.note()}" if self.held.note() else ""
        dropped = ", ".join(f"{n} {DROPPED_WORDS.get(k, k)}" for k, n in sorted(self.dropped.items()) if n)
        return (f"extract: {self.ok} ok, {self.failed} failed{f' ({reasons})' if reasons else ''}; "
                f"{self.pages} pages with {self.backend} on {self.workers} workers{rate}"
                f"{f'; dropped {dropped}' if dropped else ''}{held}")

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "failed": self.failed, "outcomes": dict(self.outcomes), "pages": self.pages,
                "seconds": round(self.seconds, 3), "queued": self.queued, "backend": self.backend,
                "workers": self.workers, "held": self.held.as_dict(), "dropped": dict(self.dropped)}


def default_workers(configured: int) -> int:
    if configured and configured > 0:
        return configured
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def queue_documents(db: Database, *, retry_failed: bool = False, redo: bool = False) -> int:
    """Queue every paper with a downloaded PDF whose text is missing or stale."""
    added = 0
    for attempt in range(3):
        try:
            with db.session() as s:
                ids = s.scalars(select(Document.paper_id)
                                .where(Document.outcome == "ok", Document.path.is_not(None))).all()
                added = enqueue(s, STAGE, ids, requeue_failed=retry_failed)
            break
        except IntegrityError:  # another process queued the same papers at the same moment
            if attempt == 2:
                raise
    with db.session() as s:
        # Finished items (done or failed) whose text is missing or made from another PDF
        # go back, or all of them with --redo. One statement, so the test is made at
        # update time: a paper another process finished a moment ago is not requeued.
        stale = (select(Document.paper_id)
                 .outerjoin(PaperText, (PaperText.paper_id == Document.paper_id) & (PaperText.source == PDF_SOURCE))
                 .where(Document.outcome == "ok", Document.path.is_not(None)))
        if not redo:
            stale = stale.where(or_(PaperText.id.is_(None), PaperText.document_sha256.is_(None),
                                    PaperText.document_sha256 != Document.sha256))
        r = s.execute(update(WorkItem)
                      .where(WorkItem.stage == STAGE, WorkItem.state.in_(("done", "failed")),
                             WorkItem.item_id.in_(stale.scalar_subquery()))
                      .values(state="pending", worker=None, lease_until=None)
                      .execution_options(synchronize_session=False))
        return added + (r.rowcount or 0)


def _save(db: Database, paper_id: int, sha256: str | None, result: Extraction, run_id: int | None) -> None:
    values = dict(document_sha256=sha256, content=result.text, chars=len(result.text) if result.text else None,
                  pages=result.pages, extractor=result.extractor, extractor_version=result.extractor_version[:64],
                  normalizer_version=result.normalizer_version, outcome=result.outcome, reason=result.reason,
                  detail=result.detail, seconds=round(result.seconds, 4), run_id=run_id)
    for attempt in range(2):
        try:
            with db.session() as s:
                row = s.scalar(select(PaperText).where(PaperText.paper_id == paper_id,
                                                       PaperText.source == PDF_SOURCE))
                if row is None:
                    s.add(PaperText(paper_id=paper_id, **values))
                else:
                    for k, v in values.items():
                        setattr(row, k, v)
            return
        except IntegrityError:  # another process inserted the row first: update it instead
            if attempt:
                raise


def run_extract(db: Database, settings: Any, *, run: RunRecorder | None = None, limit: int | None = None,
                workers: int | None = None, backend: str | None = None, retry_failed: bool = False,
                redo: bool = False, timeout: float | None = None, memory_mb: int | None = None) -> ExtractReport:
    """Extract every queued PDF; returns counts by outcome (ok or the failure reason)."""
    cfg = settings.extract
    backend = backend or cfg.backend
    if backend not in BACKENDS:
        raise ConfigError(f"unknown extract backend {backend!r}", hint=f"use one of: {', '.join(BACKENDS)}")
    n_workers = default_workers(workers or cfg.workers)
    data_dir = Path(settings.data_dir)
    report = ExtractReport(backend=backend, workers=n_workers)
    report.queued = queue_documents(db, retry_failed=retry_failed, redo=redo)
    total = pending_count(db, STAGE)
    if limit is not None:
        total = min(total, limit)
    me = worker_name()
    held: dict[int, Claim] = {}
    handed_out = 0

    def jobs() -> Iterator[tuple[Any, str, str]]:
        nonlocal handed_out
        buffer: list[Claim] = []
        while limit is None or handed_out < limit:
            if not buffer:
                size = n_workers * 2 if limit is None else min(n_workers * 2, limit - handed_out)
                with db.session() as s:
                    buffer = claim(s, STAGE, me, size)
                held.update((c.work_id, c) for c in buffer)
                if not buffer:
                    return
            c = buffer.pop(0)
            with db.session() as s:
                doc = s.scalar(select(Document).where(Document.paper_id == c.item_id))
                path, sha = (doc.path, doc.sha256) if doc is not None else (None, None)
            handed_out += 1
            # A paper without a usable Document row still gets an outcome ("missing").
            full = str(data_dir / path) if path else f"<no document for paper {c.item_id}>"
            yield (c, sha), full, backend

    started = time.perf_counter()
    pool = WorkerPool(n_workers, timeout=timeout or cfg.timeout, memory_mb=memory_mb or cfg.memory_mb)
    try:
        with progress(total, f"extract ({backend})") as bar:
            for (c, sha), result in pool.imap(jobs()):
                _save(db, c.item_id, sha, result, run.id if run is not None else None)
                outcome = result.reason if not result.ok else "ok"
                if not result.ok:
                    log.warning("%s: extract failed: %s (%s)", paper_name_of(db, c.item_id), result.reason, result.detail)
                with db.session() as s:
                    still_mine = finish(s, c, me, error=None if result.ok else f"{result.reason}: {result.detail}")
                held.pop(c.work_id, None)
                if not still_mine:
                    log.warning("%s: lease expired; another worker owns it now", paper_name_of(db, c.item_id))
                    continue
                report.outcomes[outcome or "failed"] += 1
                report.pages += result.pages or 0
                report.dropped.update(result.dropped)
                report.seconds = time.perf_counter() - started
                if run is not None:
                    run.count(outcome or "failed")
                    run.count("pages", result.pages or 0)
                    for kind, n in result.dropped.items():
                        run.count(f"dropped_{kind}", n)
                    if sum(report.outcomes.values()) % 50 == 0:
                        run.checkpoint()
                bar.advance()
    finally:
        pool.close()
        if held:  # interrupted: hand unfinished claims back at once instead of after the lease
            with db.session() as s:
                release(s, list(held.values()), me)
    report.held = held_elsewhere(db, STAGE, me)
    if run is not None:
        run.summary = report.summary
    return report
