"""`review import texts FILE`: full texts from a corpus, beside the texts of the PDFs.

Two formats:

- ACL OCL (WING-NUS, `acl-publication-info.74k.v2.parquet`): one row per Anthology
  paper with GROBID's `full_text`, keyed by `acl_id`; also `pdf_hash` (sha1 of the PDF
  GROBID read) and `corpus_paper_id` (Semantic Scholar), kept as provenance. The parquet
  is read in record batches with buffered column reads, so memory stays flat whatever
  the file's size.
- JSON Lines: `{"ident": ..., "text": ...}` per line (plain or .gz), `ident` being a
  paper's ident (an Anthology id for Anthology papers).

Each text is normalized exactly like an extracted PDF text (review/extract/normalize.py;
in worker processes, `imports.workers`) and stored as a `texts` row of its own source
("acl-ocl-grobid", or `--source`), the corpus version in `extractor_version`, so it sits
beside the PDF's text and `label.text_source` chooses between them. A row whose paper
already has a text of this source and corpus version (and normalizer) is skipped
without being normalized: reruns and resumed runs cost a read of the file.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import multiprocessing as mp
import os
import re
import time
import zlib
from collections import Counter, deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from review.db.base import utcnow
from review.db.models import Paper, PaperText, SourceRecord
from review.db.session import Database
from review.errors import InputFileError
from review.extract.normalize import NORMALIZER_VERSION, normalize
from review.log import get_logger
from review.procs import die_with_parent
from review.progress import progress
from review.runs import RunRecorder
from review.settings import Settings

log = get_logger("import")

OCL = "ocl"
JSONL = "jsonl"
OCL_SOURCE = "acl-ocl-grobid"
# The columns the ACL OCL dataset card documents (acl-publication-info.74k.v2.parquet).
OCL_COLUMNS = ("acl_id", "title", "abstract", "full_text", "corpus_paper_id", "pdf_hash", "numcitedby", "url",
               "publisher", "address", "year", "month", "booktitle", "author", "pages", "doi", "number", "volume",
               "journal", "editor", "isbn", "ENTRYTYPE", "ID", "language", "note")
OCL_REQUIRED = ("acl_id", "full_text")
OCL_PROVENANCE = ("pdf_hash", "corpus_paper_id")
_OCL_NAME = re.compile(r"acl-publication-info\.(.+)\.parquet$", re.IGNORECASE)


@dataclass
class Row:
    ident: str
    text: str | None
    line: int  # row or line number in the file, for messages
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class TextImportReport:
    source: str = ""
    corpus_version: str = ""
    path: str = ""
    counts: Counter[str] = field(default_factory=Counter)  # imported, updated, unchanged, unmatched, ...
    unmatched_examples: list[str] = field(default_factory=list)
    chars: int = 0
    seconds: float = 0.0

    @property
    def summary(self) -> str:
        c = self.counts
        rows = sum(c.values())
        rate = f", {rows / self.seconds:.0f} rows/s" if self.seconds > 0 and rows else ""
        others = ", ".join(f"{n} {k}" for k, n in sorted(c.items()) if k not in ("imported", "updated", "unchanged"))
        return (f"import texts ({self.source} {self.corpus_version}): {c.get('imported', 0)} imported, "
                f"{c.get('updated', 0)} updated, {c.get('unchanged', 0)} unchanged"
                f"{', ' + others if others else ''}; {self.chars / 1e6:.1f} M characters in {self.seconds:.1f} s{rate}")

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "corpus_version": self.corpus_version, "path": self.path,
                "counts": dict(self.counts), "unmatched_examples": self.unmatched_examples, "chars": self.chars,
                "seconds": round(self.seconds, 3), "summary": self.summary}


def run_import_texts(db: Database, settings: Settings, path: str | Path, *, fmt: str | None = None,
                     source: str | None = None, corpus_version: str | None = None, run: RunRecorder | None = None,
                     limit: int | None = None) -> TextImportReport:
    """Import every text of `path` (see the module docstring); returns the counts."""
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise InputFileError("no such file", item=str(path))
    fmt = fmt or format_of(path)
    if fmt not in (OCL, JSONL):
        raise InputFileError(f"unknown text format {fmt!r}", item=str(path), hint="use --format ocl or --format jsonl")
    source = source or (OCL_SOURCE if fmt == OCL else "jsonl")
    version = corpus_version or detect_version(path, fmt)
    report = TextImportReport(source=source, corpus_version=version, path=str(path))
    batch = settings.imports.text_batch
    rows = _ocl_rows(path, batch) if fmt == OCL else _jsonl_rows(path, batch, report)
    writer = _Writer(db, report, source, version, path, run)
    started = time.perf_counter()
    workers = _workers(settings.imports.workers)
    with progress(total_rows(path, fmt), f"import texts from {path.name}") as bar, _Pool(workers) as pool:
        window: deque[tuple[list[tuple[Row, int, int | None]], Future | list[str]]] = deque()
        taken = 0
        fault: InputFileError | None = None
        try:
            try:
                for chunk in rows:
                    if limit is not None:
                        chunk = chunk[: max(0, limit - taken)]
                        if not chunk:
                            break
                    taken += len(chunk)
                    todo = writer.select(chunk)
                    bar.advance(len(chunk) - len(todo))
                    window.append((todo, pool.submit([r.text or "" for r, _, _ in todo])))
                    while len(window) > max(1, workers) * 2:
                        bar.advance(writer.write(*_ready(window.popleft())))
            except InputFileError as exc:  # the file broke off: what was read before is still written
                fault = exc
            while window:
                bar.advance(writer.write(*_ready(window.popleft())))
        finally:
            report.seconds = time.perf_counter() - started
            writer.checkpoint()
    if run is not None:
        run.summary = report.summary
    if fault is not None:
        raise fault
    return report


def format_of(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".parquet"):
        return OCL
    if name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".json")):
        return JSONL
    raise InputFileError("cannot tell the format from the file name", item=str(path),
                         hint="name it .parquet (ACL OCL) or .jsonl, or give --format")


def detect_version(path: Path, fmt: str) -> str:
    """The corpus version: the parquet's own metadata, ACL OCL's file name, else the file's hash."""
    if fmt == OCL:
        import pyarrow.parquet as pq

        meta = pq.read_metadata(path).metadata or {}
        for key in (b"corpus_version", b"version"):
            if meta.get(key):
                return meta[key].decode("utf-8", "replace")[:64]
        m = _OCL_NAME.search(path.name)
        if m:
            return m.group(1)[:64]
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()[:12]}"


def total_rows(path: Path, fmt: str) -> int | None:
    if fmt == OCL:
        import pyarrow.parquet as pq

        return pq.read_metadata(path).num_rows
    return None


def _ocl_rows(path: Path, batch: int) -> Iterator[list[Row]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)
    except (pa.ArrowException, OSError) as exc:
        raise InputFileError(f"not a readable parquet file: {exc}", item=str(path)) from None
    names = set(pf.schema_arrow.names)
    missing = [c for c in OCL_REQUIRED if c not in names]
    if missing:
        raise InputFileError(f"not in the ACL OCL shape: no column {', '.join(missing)} "
                             f"(it has {', '.join(sorted(names)[:12])})", item=str(path),
                             hint="ACL OCL's parquet has acl_id and full_text; for other corpora use JSON Lines")
    columns = [*OCL_REQUIRED, *(c for c in OCL_PROVENANCE if c in names)]
    n = 0
    for rb in pf.iter_batches(batch_size=batch, columns=columns):
        data = rb.to_pydict()
        out = []
        for i in range(rb.num_rows):
            extra = {c: data[c][i] for c in OCL_PROVENANCE if c in data and data[c][i] is not None}
            out.append(Row(str(data["acl_id"][i] or ""), data["full_text"][i], n + i + 1, extra))
        n += rb.num_rows
        del data, rb
        pa.default_memory_pool().release_unused()  # the allocator would keep ~100 MB of freed pages
        yield out


def _jsonl_rows(path: Path, batch: int, report: TextImportReport) -> Iterator[list[Row]]:
    """Rows batch by batch; a file that breaks off (truncated gzip) yields what came before, then
    raises `InputFileError` with the reason (the caller writes those rows, then fails)."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    out: list[Row] = []
    n = 0
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:  # type: ignore[operator]
            for n, line in enumerate(fh, start=1):
                row = _jsonl_row(path, n, line, report)
                if row is not None:
                    out.append(row)
                if len(out) >= batch:
                    yield out
                    out = []
    except (EOFError, OSError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        if out:
            yield out
        raise InputFileError(f"unreadable after line {n}: {type(exc).__name__}: {exc}", item=str(path),
                             hint="the rows before it were imported; fetch the file again and rerun") from None
    if out:
        yield out


def _jsonl_row(path: Path, n: int, line: str, report: TextImportReport) -> Row | None:
    """One line as a row, or None (blank, or malformed: counted and logged)."""
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
        ident, text = obj["ident"], obj["text"]
        if not isinstance(ident, (str, int)) or not isinstance(text, (str, type(None))):
            raise TypeError("ident must be a string, text a string")
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        report.counts["malformed"] += 1
        reason = "nested too deeply" if isinstance(exc, RecursionError) else exc
        log.warning("%s line %d: not a {\"ident\", \"text\"} object (%s)", path.name, n, reason)
        return None
    return Row(str(ident), text, n)


class _Writer:
    """Matches rows to papers, skips what is there already, writes the rest (one batch per transaction)."""

    def __init__(self, db: Database, report: TextImportReport, source: str, version: str, path: Path,
                 run: RunRecorder | None):
        self.db, self.report, self.source, self.version, self.path, self.run = db, report, source, version, path, run
        self.seen: set[int] = set()  # papers already given a text by this file

    def select(self, chunk: list[Row]) -> list[tuple[Row, int, int | None]]:
        """(row, paper id, existing text id) of the rows to normalize and write."""
        counts = self.report.counts
        with self.db.session() as s:
            papers = _paper_ids(s, {r.ident for r in chunk if r.ident})
            existing = {pid: (tid, ver, norm) for pid, tid, ver, norm in s.execute(
                select(PaperText.paper_id, PaperText.id, PaperText.extractor_version, PaperText.normalizer_version)
                .where(PaperText.source == self.source, PaperText.paper_id.in_(set(papers.values()))))}
        todo = []
        for row in chunk:
            pid = papers.get(row.ident)
            if pid is None:
                counts["unmatched"] += 1
                if len(self.report.unmatched_examples) < 10:
                    self.report.unmatched_examples.append(row.ident)
            elif pid in self.seen:
                counts["duplicate"] += 1
                log.warning("%s row %d: a second text for %s; the first one is kept", self.path.name, row.line, row.ident)
            elif not (row.text or "").strip():
                counts["empty"] += 1
            else:
                self.seen.add(pid)
                tid, ver, norm = existing.get(pid, (None, None, None))
                if tid is not None and ver == self.version and norm == NORMALIZER_VERSION:
                    counts["unchanged"] += 1
                else:
                    todo.append((row, pid, tid))
        return todo

    def write(self, todo: list[tuple[Row, int, int | None]], texts: list[str]) -> int:
        """Store one batch of normalized texts; returns how many rows it settled."""
        now = utcnow()
        new, changed = [], []
        for (row, pid, tid), text in zip(todo, texts):
            if not text:
                self.report.counts["empty"] += 1
                continue
            values = {"paper_id": pid, "source": self.source, "content": text, "chars": len(text), "pages": None,
                      "document_sha256": None, "extractor": self.source, "extractor_version": self.version,
                      "normalizer_version": NORMALIZER_VERSION, "outcome": "ok", "reason": None, "detail": None,
                      "seconds": None, "run_id": self.run.id if self.run else None, "extracted_at": now,
                      "provenance": {"file": self.path.name, "path": str(self.path), "corpus_version": self.version,
                                     "id": row.ident, "row": row.line, **row.extra}}
            self.report.chars += len(text)
            (changed if tid is not None else new).append({"id": tid, **values} if tid is not None else values)
        with self.db.session() as s:
            if new:  # Core, not ORM bulk: a third less CPU in this, the busiest process
                s.execute(insert(PaperText.__table__), new)
            if changed:
                s.execute(update(PaperText), changed)
        if new:
            self.report.counts["imported"] += len(new)
        if changed:
            self.report.counts["updated"] += len(changed)
        self.checkpoint()
        return len(todo)

    def checkpoint(self) -> None:
        if self.run is not None:
            self.run.counts.clear()
            self.run.counts.update(self.report.counts)
            self.run.checkpoint()


def _paper_ids(s: Session, idents: set[str]) -> dict[str, int]:
    """ident -> paper id, by the acl record's id first (an Anthology id), else the paper's ident."""
    if not idents:
        return {}
    found = dict(s.execute(select(SourceRecord.source_id, SourceRecord.paper_id)
                           .where(SourceRecord.source == "acl", SourceRecord.source_id.in_(idents))).all())
    rest = idents - set(found)
    if rest:
        found.update(dict(s.execute(select(Paper.ident, Paper.id).where(Paper.ident.in_(rest))).all()))
    return found


def _normalize_all(texts: list[str]) -> list[str]:
    return [normalize(t) for t in texts]


def _workers(configured: int) -> int:
    from review.extract.stage import default_workers

    return default_workers(configured)


def _ready(item: tuple[list[tuple[Row, int, int | None]], Future | list[str]]) -> tuple[list, list[str]]:
    todo, pending = item
    return todo, pending.result() if isinstance(pending, Future) else pending


class _Pool:
    """Normalization in worker processes (forked), or inline for one worker or tiny batches."""

    def __init__(self, workers: int):
        self.workers = workers
        self.pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> _Pool:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def submit(self, texts: list[str]) -> Future | list[str]:
        if self.workers <= 1 or not texts:
            return _normalize_all(texts)
        if self.pool is None:
            # a killed import must not leave its workers waiting for work forever
            self.pool = ProcessPoolExecutor(self.workers, mp_context=mp.get_context("fork"),
                                            initializer=die_with_parent, initargs=(os.getpid(),))
        return self.pool.submit(_normalize_all, texts)
