"""`review download` as a library call: queue the papers, fetch with threads, record outcomes.

Why a queue: the work_items lease makes every paper downloaded exactly once even with
several processes (or machines) running, and a killed run leaves its items to the next
one. Network work runs in a thread pool; the shared `HttpClient` keeps per-host limits,
so the number of threads only bounds the total. All database writes happen on the
calling thread: each finished item writes its Document row and closes its work item in
one transaction, so an item is never recorded twice or lost between the two.
"""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Sequence

from sqlalchemy import Select, exists, func, select, update
from sqlalchemy.orm import Session

from review.claims import Claim, Held, claim, enqueue, finish, release, worker_name
from review.db.models import Document, Paper, WorkItem
from review.db.session import Database
from review.download.fetch import FetchResult, Interrupted, Prior, fetch_pdf
from review.download.store import PdfStore
from review.http import HttpClient, host_key, redact_url
from review.log import get_logger
from review.progress import progress
from review.runs import RunRecorder
from review.settings import Settings
from review.stage import held

log = get_logger("download")

STAGE = "download"
ANTHOLOGY_PREFIXES = ("https://aclanthology.org/", "http://aclanthology.org/")


@dataclass
class DownloadReport:
    """What a run did; `counts` holds ok, unchanged, failed and one key per failure reason."""

    queued: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    stale_temp_files: int = 0
    held: Held = field(default_factory=Held)  # what other download workers still hold

    @property
    def failed(self) -> int:
        return self.counts.get("failed", 0)

    @property
    def summary(self) -> str:
        reasons = {k: v for k, v in self.counts.items() if k not in ("ok", "unchanged", "failed", "kept")}
        ok = self.counts.get("ok", 0)
        text = f"downloaded {ok} PDF{'' if ok == 1 else 's'}"
        if self.counts.get("unchanged"):
            text += f", {self.counts['unchanged']} unchanged (304)"
        if self.counts.get("kept"):
            text += f", {self.counts['kept']} kept after a failed refresh"
        text += f", {self.failed} failed"
        if reasons:
            text += " (" + ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) + ")"
        if self.held.note():
            text += "; " + self.held.note()
        return text

    def as_dict(self) -> dict:
        return {"queued": self.queued, "counts": dict(self.counts), "failed": self.failed,
                "stale_temp_files": self.stale_temp_files, "held": self.held.as_dict(), "summary": self.summary}


def run_download(db: Database, settings: Settings, *, run: RunRecorder | None = None, limit: int | None = None,
                 venues: Sequence[str] | None = None, years: Sequence[int] | None = None,
                 retry_failed: bool = False, refresh: bool = False, workers: int | None = None,
                 client: HttpClient | None = None) -> DownloadReport:
    """Download the PDFs of papers that have a pdf_url and no good Document yet.

    `retry_failed` requeues papers whose download failed before; `refresh` re-checks
    downloaded ones with conditional requests (a 304 keeps the stored file). Filters
    (`venues`, `years`) narrow both what is queued and what is taken from the queue.
    Ctrl-C stops cleanly: unfinished items go back to the queue and no temp file stays.
    """
    store = PdfStore(settings.resolve(settings.data_dir))
    report = DownloadReport(stale_temp_files=store.clean_stale())
    among = _papers(venues, years)
    with db.session() as s:
        report.queued = _enqueue(s, among, retry_failed=retry_failed, refresh=refresh)
    own_client = client is None
    client = client or HttpClient(settings.http)
    try:
        _process(db, settings, store, client, report, run=run, among=among, limit=limit,
                 workers=workers or settings.download.workers, own_client=own_client)
    finally:
        if own_client:
            client.close()
        report.held = held(db, STAGE)
        if run is not None:
            run.summary = report.summary
    return report


def _papers(venues: Sequence[str] | None, years: Sequence[int] | None) -> Select:
    """Ids of papers the filters admit."""
    query = select(Paper.id)
    if venues:
        query = query.where(Paper.venue.in_(list(venues)))
    if years:
        query = query.where(Paper.year.in_(list(years)))
    return query


def _enqueue(session: Session, among: Select, *, retry_failed: bool, refresh: bool) -> int:
    has_ok = exists().where(Document.paper_id == Paper.id, Document.outcome == "ok")
    wanted = among.where(Paper.pdf_url.is_not(None), Paper.pdf_url != "", ~has_ok)
    added = enqueue(session, STAGE, session.scalars(wanted).all(), requeue_failed=retry_failed)
    if refresh:
        downloaded = among.where(Paper.pdf_url.is_not(None), Paper.pdf_url != "", has_ok)
        ids = session.scalars(downloaded).all()
        added += enqueue(session, STAGE, ids)
        result = session.execute(
            update(WorkItem)
            .where(WorkItem.stage == STAGE, WorkItem.state.in_(("done", "failed")), WorkItem.item_id.in_(downloaded))
            .values(state="pending", worker=None, lease_until=None)
            .execution_options(synchronize_session=False))
        added += result.rowcount or 0
    return added


def _available(session: Session, among: Select) -> int:
    return session.scalar(select(func.count()).select_from(WorkItem).where(
        WorkItem.stage == STAGE, WorkItem.item_id.in_(among),
        WorkItem.state == "pending")) or 0


@dataclass(eq=False)
class _Job:
    claim: Claim
    paper_id: int
    ident: str
    url: str
    crc32: str | None
    sha256: str | None
    prior: Prior | None

    @property
    def host(self) -> str:
        return host_key(self.url)


def anthology_mirror_url(url: str, base: str) -> str:
    """The URL to fetch: an ACL Anthology PDF URL moved onto `download.anthology_pdf_base`.

    Why at download time: a local mirror (or a faster copy) serves every record as it
    was harvested, and the records keep naming the Anthology.
    """
    if base:
        for prefix in ANTHOLOGY_PREFIXES:
            if url.startswith(prefix):
                return base.rstrip("/") + "/" + url[len(prefix):]
    return url


def _jobs(session: Session, claims: list[Claim], pdf_base: str = "") -> tuple[list[_Job], list[Claim]]:
    """Look up what each claimed paper needs; claims whose paper lost its URL come back apart."""
    papers = {p.id: p for p in session.scalars(select(Paper).where(Paper.id.in_([c.item_id for c in claims])))}
    docs = {d.paper_id: d for d in session.scalars(select(Document).where(Document.paper_id.in_(list(papers))))}
    jobs, orphans = [], []
    for c in claims:
        paper = papers.get(c.item_id)
        if paper is None or not paper.pdf_url:
            orphans.append(c)
            continue
        doc = docs.get(paper.id)
        prior = None
        if doc is not None and doc.outcome == "ok":
            prior = Prior(doc.path, doc.sha256, doc.size, doc.etag, doc.last_modified)
        url = anthology_mirror_url(paper.pdf_url, pdf_base)
        jobs.append(_Job(c, paper.id, paper.ident, url, paper.pdf_crc32, paper.pdf_sha256, prior))
    return jobs, orphans


def _process(db: Database, settings: Settings, store: PdfStore, client: HttpClient, report: DownloadReport, *,
             run: RunRecorder | None, among: Select, limit: int | None, workers: int, own_client: bool) -> None:
    """Claim ahead, then hand jobs to threads host by host.

    Jobs wait in a backlog until their host has a free slot, so a stretch of the queue
    from one host does not tie up every thread while other hosts sit idle. The backlog
    (claimed but not started) is bounded, so leases stay short.
    """
    worker = worker_name()
    stop = threading.Event()
    with db.session() as s:
        total = _available(s, among)
    if limit is not None:
        total = min(total, limit)
    workers = max(1, workers)
    per_host = max(1, settings.http.per_host_concurrency)
    window = max(workers * 32, 64)  # claimed ahead: lets idle hosts be found further down the queue
    taken = 0
    backlog: deque[_Job] = deque()
    busy: Counter[str] = Counter()
    running: dict[cf.Future, _Job] = {}
    tries = max(1, min(3, settings.http.retries + 1))
    with progress(total, "download") as bar, cf.ThreadPoolExecutor(max_workers=workers,
                                                                   thread_name_prefix="download") as pool:
        try:
            while True:
                room = window - len(running) - len(backlog)
                if limit is not None:
                    room = min(room, limit - taken)
                if room > 0 and len(backlog) < workers:
                    with db.session() as s:
                        claims = claim(s, STAGE, worker, room, among=among)
                        jobs, orphans = _jobs(s, claims, settings.download.anthology_pdf_base)
                        if orphans:
                            finish(s, orphans, worker, error="no_pdf_url")
                    taken += len(claims)
                    backlog.extend(jobs)
                    bar.advance(len(orphans))
                for job in list(backlog):
                    if len(running) >= workers:
                        break
                    if busy[job.host] >= per_host:
                        continue
                    backlog.remove(job)
                    busy[job.host] += 1
                    fut = pool.submit(fetch_pdf, client, store, job.url, max_bytes=settings.download.max_bytes,
                                      crc32=job.crc32, sha256=job.sha256, prior=job.prior, stop=stop, tries=tries,
                                      max_seconds=settings.download.max_seconds)
                    running[fut] = job
                if not running:
                    if backlog:  # cannot happen (a free host always exists when nothing runs)
                        raise RuntimeError("download backlog stuck")
                    break
                done, _ = cf.wait(list(running), timeout=0.5, return_when=cf.FIRST_COMPLETED)
                for fut in done:
                    job = running[fut]
                    outcome = _record(db, worker, job, fut, run)
                    del running[fut]  # only now: a Ctrl-C inside _record must still see the job
                    busy[job.host] -= 1
                    if outcome is not None:
                        report.counts.update(outcome)
                        if run is not None:
                            run.counts.update(outcome)
                    bar.advance()
                if done and run is not None:
                    run.checkpoint()
        except BaseException:
            # Ctrl-C (or a database failure): stop the threads, keep what finished, give back the rest.
            stop.set()
            if own_client:
                client.close()  # wakes fetches sleeping in a backoff
            _drain_after_stop(db, worker, running, run, report)
            with db.session() as s:
                # finished ones are no longer claimed, so releasing them is a no-op
                release(s, [j.claim for j in [*running.values(), *backlog]], worker)
            raise


def _drain_after_stop(db: Database, worker: str, running: dict[cf.Future, _Job], run: RunRecorder | None,
                      report: DownloadReport) -> None:
    """Wait for running fetches to notice the stop; record those that completed anyway."""
    for fut, job in list(running.items()):
        try:
            fut.result(timeout=60)
            outcome = _record(db, worker, job, fut, run)
        except BaseException:
            continue
        if outcome is not None:
            report.counts.update(outcome)
            if run is not None:
                run.counts.update(outcome)


def _record(db: Database, worker: str, job: _Job, fut: cf.Future, run: RunRecorder | None) -> Counter[str] | None:
    """Write one item's Document and close its claim, in one transaction."""
    try:
        result: FetchResult = fut.result()
    except Interrupted:
        return None
    except Exception as exc:  # a bug or a disk error: this item fails, the run goes on
        result = FetchResult("failed", reason="error", detail=f"{type(exc).__name__}: {exc}", url=job.url)
    with db.session() as s:
        doc = s.scalar(select(Document).where(Document.paper_id == job.paper_id))
        kept = result.outcome == "failed" and doc is not None and doc.outcome == "ok" and job.prior is not None
        error = None if result.outcome != "failed" or kept else result.reason or "error"
        if finish(s, job.claim, worker, error=error) == 0:
            log.warning("paper %s: lease lost to another worker; its result is not recorded twice", job.ident)
            s.rollback()
            return None
        if doc is None:
            doc = Document(paper_id=job.paper_id, attempts=0)
            s.add(doc)
        doc.attempts = (doc.attempts or 0) + 1
        doc.run_id = run.id if run is not None else doc.run_id
        if kept:
            doc.detail = f"refresh failed ({result.reason}): {result.detail}"
            log.warning("paper %s: refresh of %s failed (%s); the stored PDF is kept",
                        job.ident, redact_url(job.url), result.reason)
            return Counter({"kept": 1})
        doc.url = job.url
        doc.final_url = result.final_url
        doc.http_status = result.http_status
        doc.content_type = result.content_type
        doc.etag = result.etag
        doc.last_modified = result.last_modified
        doc.detail = result.detail
        if result.outcome in ("ok", "unchanged"):
            doc.outcome, doc.reason = "ok", None
            doc.path, doc.sha256, doc.size = result.path, result.sha256, result.size
            if result.final_url and result.final_url != job.url:
                log.debug("paper %s: redirected to %s", job.ident, redact_url(result.final_url))
            return Counter({result.outcome: 1})
        doc.outcome, doc.reason = "failed", result.reason
        doc.path, doc.sha256, doc.size = None, None, result.size
        log.error("paper %s: %s: %s (%s)", job.ident, result.reason, result.detail, redact_url(job.url))
        return Counter({"failed": 1, result.reason or "error": 1})
