"""`review import pdfs PATH`: PDFs the user already has, into the store as if downloaded.

PATH is a folder, a .tar (plain, .gz, .bz2, .xz), a .zip or one .pdf; archives are
streamed (archive.py). Each file is matched to a harvested paper (matcher.py: ids in its
name, else its hashes), checked as the downloader checks (verify.py), stored in the same
content-addressed store, and recorded as the paper's one `documents` row with provenance
saying it was imported from where. With `create`, a PDF that matches nothing becomes a
record of its own (records.py), so any folder of papers can be reviewed.

Every file ends with one outcome, kept in the `import_files` ledger:

- matched: stored as the PDF of a harvested paper (or `created`: of a new record);
- duplicate: that paper already has its PDF (nothing copied);
- unmatched: no paper found (nothing copied; `--create` makes records for them);
- corrupt: claims to be a PDF but is not usable: not_pdf, truncated, unreadable;
- refused: not imported on principle: checksum_mismatch (a sound PDF, but not the file
  the record describes: another version, most likely), unsafe_path (absolute or `..`),
  link, not_regular_file, encrypted_member, too_large (the size cap; also stops zip
  bombs), not_pdf (a file that does not even claim to be a PDF), damaged_archive (the
  row "(rest of the archive)" of a cut-off archive; the files before it are kept).

Reruns are cheap and safe: a file the ledger has settled is skipped without being read
(unmatched ones are looked at again with `create` or `retry_unmatched`), the store never
holds a file twice, and a run killed at any point (SIGKILL included) loses at most the
open batch of ledger rows, whose files the next run finds already in the store.
Transactions hold `imports.pdf_batch` files, so the database is not the bottleneck.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from review.db.models import Document, WorkItem
from review.db.models.documents import ImportedFile
from review.db.session import Database
from review.download.store import PdfStore
from review.importer import archive, verify
from review.importer.matcher import Ambiguous, Match, Matcher
from review.importer.names import ids_in_name
from review.importer.pdfmeta import confirmed, read_meta, words
from review.importer.records import create_paper, find_by_title
from review.log import get_logger
from review.progress import progress
from review.runs import RunRecorder
from review.settings import Settings

log = get_logger("import")

MATCHED, CREATED, DUPLICATE, UNMATCHED, CORRUPT, REFUSED = (
    "matched", "created", "duplicate", "unmatched", "corrupt", "refused")
OUTCOMES = (MATCHED, CREATED, DUPLICATE, UNMATCHED, CORRUPT, REFUSED)


@dataclass
class FileOutcome:
    """What happened to one file; `as_dict()` is a row of `--json`'s `files`."""

    member: str
    outcome: str
    reason: str | None = None
    detail: str | None = None
    paper: str | None = None  # the paper's ident
    matched_by: str | None = None
    sha256: str | None = None
    size: int | None = None
    paper_id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("paper_id")
        return d


@dataclass
class PdfImportReport:
    source: str = ""
    kind: str = ""
    counts: Counter[str] = field(default_factory=Counter)  # outcome -> files, this run
    reasons: Counter[str] = field(default_factory=Counter)  # "outcome:reason" -> files
    already: int = 0  # settled by an earlier run: skipped unread
    stale_temp_files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    files: list[dict[str, Any]] = field(default_factory=list)  # the ledger of this source (list_files)

    @property
    def failed(self) -> int:
        """Files the user should look at: corrupt ones, and refusals other than non-PDFs."""
        refused = sum(n for k, n in self.reasons.items() if k.startswith(REFUSED + ":") and k != f"{REFUSED}:not_pdf")
        return self.counts.get(CORRUPT, 0) + refused

    @property
    def summary(self) -> str:
        parts = []
        for outcome in OUTCOMES:
            n = self.counts.get(outcome, 0)
            if not n and outcome not in (MATCHED, UNMATCHED):
                continue
            why = sorted((k.split(":", 1)[1], v) for k, v in self.reasons.items() if k.startswith(outcome + ":"))
            parts.append(f"{n} {outcome}" + (f" ({', '.join(f'{r} {v}' for r, v in why)})" if why else ""))
        done = sum(self.counts.values())
        rate = f", {done / self.seconds:.0f} files/s" if self.seconds > 0 and done else ""
        return (f"import pdfs: {', '.join(parts)}; {self.already} already imported; "
                f"{self.bytes / 1e6:.1f} MB read in {self.seconds:.1f} s{rate}")

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "kind": self.kind, "counts": {k: self.counts.get(k, 0) for k in OUTCOMES},
                "reasons": dict(self.reasons), "already": self.already, "failed": self.failed,
                "stale_temp_files": self.stale_temp_files, "bytes": self.bytes, "seconds": round(self.seconds, 3),
                "summary": self.summary, "files": self.files}


def run_import_pdfs(db: Database, settings: Settings, path: str | Path, *, create: bool = False,
                    retry_unmatched: bool = False, run: RunRecorder | None = None, limit: int | None = None,
                    list_files: bool = False) -> PdfImportReport:
    """Import every file of `path` (see the module docstring); returns the counts."""
    source = Path(path).expanduser().resolve()
    kind = archive.kind_of(source)
    store = PdfStore(settings.resolve(settings.data_dir))
    report = PdfImportReport(source=str(source), kind=kind, stale_temp_files=store.clean_stale())
    settled, listed = _settled(db, str(source), again=create or retry_unmatched)
    importer = _Importer(settings, store, str(source), kind, create=create, run_id=run.id if run else None,
                         listed=listed)
    started = time.perf_counter()
    with progress(archive.count(source), f"import pdfs from {source.name}") as bar, db.sessions() as session:
        importer.bind(session)
        pending = handled = 0
        try:
            for entry in archive.entries(source):
                if limit is not None and handled >= limit:
                    break
                known = settled.get(entry.name)
                if known is not None and (entry.size is None or known in (-1, entry.size)):
                    report.already += 1
                    bar.advance()
                    continue
                result = importer.settle(entry)
                handled += 1
                report.counts[result.outcome] += 1
                if result.reason:
                    report.reasons[f"{result.outcome}:{result.reason}"] += 1
                report.bytes += result.size or 0
                _log(result)
                pending += 1
                if pending >= settings.imports.pdf_batch:
                    session.commit()
                    pending = 0
                    _checkpoint(run, report)
                bar.advance()
            session.commit()
        except BaseException:
            session.rollback()  # the open batch only; its stored files are found again next time
            raise
        finally:
            report.seconds = time.perf_counter() - started
            _checkpoint(run, report)
    if list_files:
        report.files = ledger(db, str(source))
    if run is not None:
        run.summary = report.summary
    return report


def ledger(db: Database, source: str) -> list[dict[str, Any]]:
    """Every file of `source` the ledger knows, in name order, with its outcome."""
    from review.db.models import Paper

    with db.session() as s:
        rows = s.execute(select(ImportedFile, Paper.ident).outerjoin(Paper, Paper.id == ImportedFile.paper_id)
                         .where(ImportedFile.source == source).order_by(ImportedFile.member)).all()
    return [FileOutcome(f.member, f.outcome, f.reason, f.detail, ident, f.matched_by, f.sha256, f.size).as_dict()
            for f, ident in rows]


def _settled(db: Database, source: str, *, again: bool) -> tuple[dict[str, int], set[str]]:
    """member -> size (-1 when unknown) of the files an earlier run finished with, and every
    member the ledger lists (unmatched ones looked at again have a row to update)."""
    with db.session() as s:
        rows = s.execute(select(ImportedFile.member, ImportedFile.size, ImportedFile.outcome)
                         .where(ImportedFile.source == source)).all()
    settled = {m: (size if size is not None else -1) for m, size, outcome in rows
               if not (again and outcome == UNMATCHED)}
    return settled, {m for m, _, _ in rows}


def _checkpoint(run: RunRecorder | None, report: PdfImportReport) -> None:
    if run is not None:
        run.counts.clear()
        run.counts.update(report.counts)
        run.counts.update(report.reasons)
        run.counts["already"] = report.already
        run.checkpoint()


def _log(result: FileOutcome) -> None:
    what = f"{result.member}: {result.outcome}"
    if result.paper:
        what += f" -> {result.paper} (by {result.matched_by})"
    if result.reason:
        what += f": {result.reason}"
    if result.outcome in (CORRUPT, REFUSED) and result.reason != "not_pdf":
        log.warning("%s (%s)", what, result.detail)
    else:
        log.debug("%s%s", what, f" ({result.detail})" if result.detail else "")


class _Importer:
    """Settles one file after another within the caller's open transaction."""

    def __init__(self, settings: Settings, store: PdfStore, source: str, kind: str, *, create: bool,
                 run_id: int | None, listed: set[str]):
        self.settings, self.store, self.source, self.kind = settings, store, source, kind
        self.create, self.run_id = create, run_id
        self.listed = listed  # members with a ledger row (grows as files are settled)
        self.max_bytes = settings.download.max_bytes
        self.session: Session
        self.matcher: Matcher

    def bind(self, session: Session) -> None:
        self.session, self.matcher = session, Matcher(session)

    def settle(self, entry: archive.Entry) -> FileOutcome:
        result = self._settle(entry)
        self._record(result)
        return result

    def _settle(self, entry: archive.Entry) -> FileOutcome:
        name = entry.name
        if entry.refused:
            return FileOutcome(name, REFUSED, entry.refused, entry.detail, size=entry.size)
        named = self.matcher.by_name(ids_in_name(name))
        if isinstance(named, Match) and self._has_pdf(named.paper_id):
            return FileOutcome(name, DUPLICATE, "paper_has_pdf", f"{named.ident} already has its PDF; not read",
                               named.ident, named.by, size=entry.size, paper_id=named.paper_id)
        if entry.size is not None and entry.size > self.max_bytes:
            return FileOutcome(name, REFUSED, verify.TOO_LARGE, f"{entry.size} bytes > download.max_bytes "
                               f"{self.max_bytes}", size=entry.size)
        assert entry.opener is not None
        try:
            with entry.opener() as stream:
                copied = verify.copy_checked(stream, self.store, max_bytes=self.max_bytes)
        except Exception as exc:  # the archive itself broke under this member
            copied = verify.Copied(reason=verify.UNREADABLE, detail=f"{type(exc).__name__}: {exc}")
        try:
            return self._place(entry, named, copied)
        finally:
            copied.discard()  # committed files were moved away; anything left is a leftover

    def _place(self, entry: archive.Entry, named: Match | Ambiguous | None, copied: verify.Copied) -> FileOutcome:
        name = entry.name
        if not copied.ok:
            return self._bad(name, copied)
        out = FileOutcome(name, UNMATCHED, sha256=copied.sha256, size=copied.size)
        match = named if isinstance(named, Match) else None
        if match is None:
            match = self._by_content(copied, out)
        if match is None and self.create:
            match = self._create(name, copied)
        if match is None:
            if isinstance(named, Ambiguous):
                out.detail = f"the name names {len(named.idents)} papers: {', '.join(named.idents[:5])}"
            out.detail = out.detail or "no harvested paper has this name's id or this file's hashes"
            return out
        out.paper, out.matched_by, out.paper_id = match.ident, match.by, match.paper_id
        if match.by != "created" and self._has_pdf(match.paper_id):
            same = self._stored_sha(match.paper_id) == copied.sha256
            out.outcome, out.reason = DUPLICATE, "same_bytes" if same else "paper_has_pdf"
            out.detail = f"{match.ident} already has {'these very bytes' if same else 'its PDF'}"
            return out
        bad = verify.checks(copied, crc32=match.crc32, sha256=match.sha256)
        if bad:  # a sound PDF, but not the file the record describes: another version, most likely
            out.outcome, (out.reason, out.detail) = REFUSED, bad
            return out
        self._store(match, copied, name)
        out.outcome = CREATED if match.by == "created" else MATCHED
        return out

    def _bad(self, name: str, copied: verify.Copied) -> FileOutcome:
        outcome = CORRUPT
        if copied.reason == verify.TOO_LARGE or (copied.reason == verify.NOT_PDF and not name.lower().endswith(".pdf")):
            outcome = REFUSED
        return FileOutcome(name, outcome, copied.reason, copied.detail, sha256=copied.sha256, size=copied.size or None)

    def _by_content(self, copied: verify.Copied, out: FileOutcome) -> Match | None:
        assert copied.sha256 and copied.crc32
        match = self.matcher.by_hash(copied.sha256, copied.crc32)
        if match is not None and match.needs_title:
            meta = read_meta(str(copied.temp), timeout=self.settings.imports.meta_timeout)
            if not confirmed(match.title, words(meta.get("first_page", ""))):
                out.detail = (f"its crc32 is that of {match.ident}, but the first page does not show its title "
                              f"{match.title!r}: a crc32 collision, not matched")
                return None
        return match

    def _create(self, name: str, copied: verify.Copied) -> Match:
        assert copied.sha256
        meta = read_meta(str(copied.temp), timeout=self.settings.imports.meta_timeout)
        match = find_by_title(self.session, meta)
        if match is None:
            match = create_paper(self.session, sha256=copied.sha256, meta=meta, source=self.source, member=name,
                                 run_id=self.run_id)
            self.matcher.remember(match.paper_id, copied.sha256)
        return match

    def _store(self, match: Match, copied: verify.Copied, member: str) -> None:
        """Commit the file to its content address and record it as the paper's PDF."""
        assert copied.temp is not None and copied.sha256
        rel = self.store.commit(copied.temp, copied.sha256)
        copied.temp = None
        doc = self.session.scalar(select(Document).where(Document.paper_id == match.paper_id))
        if doc is None:
            doc = Document(paper_id=match.paper_id, attempts=0)
            self.session.add(doc)
        doc.url, doc.final_url, doc.http_status, doc.content_type = self._uri(member), None, None, "application/pdf"
        doc.etag = doc.last_modified = None
        doc.outcome, doc.reason, doc.detail = "ok", None, f"imported from {self.source}"
        doc.path, doc.sha256, doc.size, doc.run_id = rel, copied.sha256, copied.size, self.run_id
        doc.provenance = {"via": "import", "source": self.source, "kind": self.kind, "member": member,
                          "matched_by": match.by, "crc32": copied.crc32}
        # The paper is done for the downloader too: a queued or claimed download is closed, so a
        # downloader holding it records nothing over this file (its lease is gone).
        self.session.execute(update(WorkItem).where(WorkItem.stage == "download", WorkItem.item_id == match.paper_id,
                                                    WorkItem.state.in_(("pending", "claimed", "failed")))
                             .values(state="done", worker=None, lease_until=None, last_error=None)
                             .execution_options(synchronize_session=False))
        self.session.flush()

    def _uri(self, member: str) -> str:
        base = Path(self.source)
        if self.kind == "folder":
            return (base / member).as_uri()
        if self.kind == "file":
            return base.as_uri()
        return f"{base.as_uri()}#{quote(member)}"

    def _has_pdf(self, paper_id: int) -> bool:
        return self.session.scalar(select(Document.id).where(Document.paper_id == paper_id,
                                                             Document.outcome == "ok")) is not None

    def _stored_sha(self, paper_id: int) -> str | None:
        return self.session.scalar(select(Document.sha256).where(Document.paper_id == paper_id))

    def _record(self, result: FileOutcome) -> None:
        """The ledger row of this file (one per source and member; an unmatched one is updated)."""
        row = None
        if result.member in self.listed:  # a retried unmatched file, or a name the archive holds twice
            row = self.session.scalar(select(ImportedFile).where(ImportedFile.source == self.source,
                                                                 ImportedFile.member == result.member))
        if row is None:
            row = ImportedFile(source=self.source, member=result.member)
            self.session.add(row)
            self.listed.add(result.member)
        paper_id = result.paper_id
        row.size, row.outcome, row.reason, row.detail = result.size, result.outcome, result.reason, result.detail
        row.matched_by, row.paper_id, row.sha256, row.run_id = result.matched_by, paper_id, result.sha256, self.run_id
        self.session.flush()
