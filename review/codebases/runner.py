"""`review code scan`: fetch codebases and record what `scan.scan_tree` finds in them.

Two ways in: `scan_target` scans one local directory, archive or repository URL and
touches no database (for a quick look or an author's own check); `run_scan` drains the
`scan` queue of linked codebases, writes the packages used (C1, `packages`) and present,
the automated C2 verdict with its reasons, anti-features and evidence rows (each with its
role and reason), and records a run. Evidence rows are automated findings: a rescan
replaces them; human decisions live elsewhere and are never touched. Where the database
knows the paper's own package labels (P4: a human answer, else the automated label), a
code package that differs from them is the appendix B anti-feature
`package_differs_from_paper`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable
from urllib.parse import urlsplit

from sqlalchemy import delete, or_, select, update

from review.codebases.catalog import Catalog, load_catalog
from review.metric import metric_holding
from review.codebases.fetch import (Checkout, FetchFailed, cache_path, git_clone, is_archive, safe_segment,
                                    unpack_archive)
from review.codebases.scan import SCANNER_VERSION, AntiFeature, ScanReport, scan_tree
from review.codebases.urls import parse_repo_url
from review.db.base import utcnow
from review.db.models import Codebase, CodeFinding, HumanDecision, PaperLabel, WorkItem
from review.db.session import Database
from review.errors import InputFileError
from review.log import get_logger
from review.claims import Held, enqueue
from review.runs import RunRecorder, record_run
from review.settings import Settings
from review.names import codebase_name_of
from review.stage import drain, held

log = get_logger("codebases.scan")

STAGE = "scan"


def _limits(settings: Settings) -> dict[str, int]:
    return {"max_files": settings.code.max_files, "max_file_bytes": settings.code.max_file_kb * 1024}


def clone_url(settings: Settings, url: str, full_name: str | None = None) -> str:
    """Where to clone a codebase from, every host through `code.git_base_url`.

    On GitHub itself (the default) GitHub repositories come from there and other hosts from
    themselves. Any other base is a mirror (in tests a local folder of repositories) and
    serves every host: GitHub repositories at
    BASE/owner/name.git, the others at BASE/<host>/<owner>/<name>.git, so a configured
    mirror is never bypassed for a Bitbucket or GitLab link.
    """
    base = settings.code.git_base_url.rstrip("/")
    ref = parse_repo_url(url)
    if ref is not None and ref.host == "github.com":
        return f"{base}/{full_name or ref.full_name}.git"
    mirror = not is_github_itself(base)
    if ref is not None:
        return f"{base}/{ref.host}/{ref.owner}/{ref.name}.git" if mirror else f"{ref.url}.git"
    parts = urlsplit(url)
    if mirror and parts.scheme in ("http", "https", "ssh", "git") and parts.hostname:
        path = parts.path.strip("/")
        return f"{base}/{parts.hostname.lower()}/{path}" + ("" if path.endswith(".git") else ".git")
    return url


def is_github_itself(base: str) -> bool:
    """A git base URL on github.com is GitHub, not a mirror of every host."""
    return (urlsplit(base).hostname or "").lower() in ("github.com", "www.github.com")


def fetch_target(settings: Settings, target: str, *, refresh: bool = False) -> tuple[Checkout, str]:
    """A local directory as is, a local archive unpacked, or a URL cloned into the cache."""
    max_bytes = settings.code.max_repo_mb * 1_000_000
    path = Path(target).expanduser()
    if path.is_dir():
        return Checkout(path.resolve(), None, cached=True), str(path.resolve())
    if path.is_file():
        if not is_archive(path):
            raise InputFileError("not a directory, an archive (.zip, .tar.gz) or a repository URL", item=target)
        dest = archive_dest(settings.resolve(settings.data_dir), path)
        return unpack_archive(path, dest, max_bytes=max_bytes, max_files=settings.code.max_files,
                              max_file_bytes=settings.code.max_file_kb * 1024), str(path)
    if "://" not in target and not target.startswith("git@") and parse_repo_url(target) is None:
        raise InputFileError("no such directory or archive, and not a repository URL", item=target)
    url = target if target.startswith("file:") else clone_url(settings, target)
    dest = cache_path(settings.resolve(settings.data_dir), url)
    return git_clone(url, dest, timeout=settings.code.clone_timeout, max_bytes=max_bytes, refresh=refresh), target


def scan_target(settings: Settings, target: str, *, catalog: Catalog | None = None, refresh: bool = False) -> ScanReport:
    """Scan one directory, archive or repository URL; no database involved."""
    catalog = catalog or load_catalog(settings.code.catalog or None, settings)
    try:
        checkout, label = fetch_target(settings, target, refresh=refresh)
    except FetchFailed as exc:
        raise InputFileError(f"cannot fetch ({exc.reason}): {exc.detail}", item=target) from None
    report = scan_tree(checkout.path, catalog, target=label, **_limits(settings))
    report.commit = checkout.commit
    report.skipped.update(checkout.skipped)  # archive members refused before the scan could see them
    report.limits[:0] = checkout.limits
    return report


def archive_dest(data_dir: Path, archive: Path) -> Path:
    """archives/<file name>-<hash of its full path>: `x.zip` and `x.tar.gz`, or two `x.zip`
    in different folders, never unpack over each other."""
    digest = hashlib.sha256(str(archive.resolve()).encode()).hexdigest()[:12]
    return data_dir / "archives" / f"{safe_segment(archive.name)}-{digest}"


@dataclass
class ScanResult:
    counts: Counter[str] = field(default_factory=Counter)
    packages: Counter[str] = field(default_factory=Counter)  # packages used (C1)
    verdicts: Counter[str] = field(default_factory=Counter)  # automated C2: true / false / unknown
    run_id: int | None = None
    held: Held = field(default_factory=Held)  # what other scan workers still hold

    def summary(self) -> str:
        c = self.counts
        top = ", ".join(f"{k} {v}" for k, v in self.packages.most_common(5)) or "none"
        failed = sum(v for k, v in c.items() if k not in ("ok", "skipped_deleted"))
        held = f"; {self.held.note()}" if self.held.note() else ""
        c2 = ", ".join(f"{k} {self.verdicts[k]}" for k in ("true", "false", "unknown") if self.verdicts[k]) or "none"
        return (f"scanned {c['ok']} codebases ({failed} failed, {c['skipped_deleted']} deleted on GitHub skipped); "
                f"packages used: {top}; C2: {c2}{held}")


def run_scan(db: Database, settings: Settings, *, limit: int | None = None, rescan: bool = False,
             retry_failed: bool = False, only_prelim: bool = False, refresh_clones: bool = False,
             codebase_ids: Iterable[int] | None = None, catalog: Catalog | None = None) -> ScanResult:
    """Scan every linked codebase not scanned yet (or all with `rescan`), resumably."""
    catalog = catalog or load_catalog(settings.code.catalog or None, settings)
    result = ScanResult()
    args = {"limit": limit, "rescan": rescan, "retry_failed": retry_failed, "only_prelim": only_prelim}
    with record_run(db, "code scan", args) as run:
        result.run_id = run.id
        held_by = metric_holding(catalog.path)  # the run names the metric whose packages it looked for
        run.signature.update({**(held_by.signature() if held_by else {"metric": catalog.metric}),
                              "scanner": f"review-code-scan-{SCANNER_VERSION}", **catalog.signature()})
        run.rules_sha256 = catalog.sha256
        with db.session() as s:
            q = select(Codebase.id)
            if codebase_ids is not None:
                q = q.where(Codebase.id.in_(list(codebase_ids)))
            elif not rescan:
                q = q.where(or_(Codebase.scanned_at.is_(None),
                                Codebase.scan_outcome == "failed" if retry_failed else Codebase.id < 0))
            if only_prelim:
                q = q.where(Codebase.code_metric_prelim.is_(True))
            ids = list(s.scalars(q))
            enqueue(s, STAGE, ids, requeue_failed=retry_failed)
            if ids and (rescan or retry_failed or codebase_ids is not None):
                for i in range(0, len(ids), 5000):
                    s.execute(update(WorkItem).where(WorkItem.stage == STAGE, WorkItem.item_id.in_(ids[i:i + 5000]),
                                                     WorkItem.state.in_(("done", "failed")))
                              .values(state="pending", worker=None, lease_until=None))

        def handle(session, codebase_id: int) -> str:  # type: ignore[no-untyped-def]
            return _scan_one(session, settings, catalog, codebase_id, run, result, refresh_clones)

        outcomes = drain(db, STAGE, handle, run=run, batch=5, limit=limit, describe="code scan",
                         name=lambda codebase_id: codebase_name_of(db, codebase_id))
        result.counts.update(outcomes)
        result.held = held(db, STAGE)
        run.counts.update({f"package:{k}": v for k, v in result.packages.items()})
        run.counts.update({f"c2:{k}": v for k, v in result.verdicts.items()})
        run.summary = result.summary()
    return result


def _scan_one(session, settings: Settings, catalog: Catalog, codebase_id: int, run: RunRecorder,  # type: ignore[no-untyped-def]
              result: ScanResult, refresh: bool) -> str:
    cb = session.get(Codebase, codebase_id)
    if cb is None:
        return "missing"
    if cb.lookup_status == "deleted":
        cb.scan_outcome, cb.scan_reason, cb.scanned_at = "failed", "deleted", utcnow()
        cb.scan_detail = "GitHub says the repository no longer exists"
        return "skipped_deleted"
    url = clone_url(settings, cb.url, cb.full_name)
    dest = cache_path(settings.resolve(settings.data_dir), url)
    try:
        checkout = git_clone(url, dest, timeout=settings.code.clone_timeout,
                             max_bytes=settings.code.max_repo_mb * 1_000_000, refresh=refresh)
    except FetchFailed as exc:
        log.error("codebase %s: %s", cb.url, exc)
        cb.scan_outcome, cb.scan_reason, cb.scan_detail = "failed", exc.reason, exc.detail[:2000]
        cb.scanned_at = utcnow()
        return exc.reason
    report = scan_tree(checkout.path, catalog, target=cb.url, **_limits(settings))
    report.commit = checkout.commit
    paper_packages, where = paper_package_labels(session, cb.paper_id, catalog)
    report.anti_features += differs_from_paper(report, paper_packages, where, catalog)
    session.execute(delete(CodeFinding).where(CodeFinding.codebase_id == cb.id))
    for row in finding_rows(report, catalog.sha256, run.id):
        session.add(CodeFinding(codebase_id=cb.id, **row))
    cb.packages = report.packages_used
    cb.packages_present = report.packages_present
    cb.eval_reproducible = report.eval_reproducible
    cb.eval_reproducible_reason = "; ".join(report.eval_reproducible_reason)[:4000] or None
    cb.anti_features = report.anti_feature_names
    cb.scan_metric_prelim = report.prelim
    cb.scan_commit = checkout.commit
    cb.scan_outcome, cb.scan_reason = "ok", ("truncated" if report.truncated else None)
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(report.skipped.items()))
    cb.scan_detail = f"{report.files_read} files read of {report.files_seen}" + (f"; skipped: {skipped}" if skipped else "")
    if report.limits:
        cb.scan_detail += "; limits: " + "; ".join(report.limits)
    cb.scanned_at = utcnow()
    result.packages.update(report.packages_used)
    result.verdicts[report.verdict] += 1
    return "ok"


def finding_rows(report: ScanReport, sha256: str, run_id: int | None) -> list[dict[str, object]]:
    """The code_findings rows of one scan: evidence, anti-features and the four C2 conditions."""
    rows: list[dict[str, object]] = []
    for e in report.evidence:
        rows.append({"kind": "package", "label": e.package, "file": e.file, "line": e.line, "text": _finding_text(e),
                     "source": e.source, "role": e.role or None, "reason": (e.reason or None) and e.reason[:4000],
                     "rules_sha256": sha256, "run_id": run_id})
    for a in report.anti_features:
        rows.append({"kind": "anti_feature", "label": a.feature, "file": a.file or "", "line": a.line,
                     "text": (a.text or a.detail)[:2000], "source": None, "role": None, "reason": a.detail[:4000],
                     "rules_sha256": sha256, "run_id": run_id})
    for c in report.conditions:
        first = c.evidence[0] if c.evidence else {}
        state = "unknown" if c.holds is None else ("holds" if c.holds else "fails")
        rows.append({"kind": "condition", "label": f"C2.{c.number} {c.name}", "file": str(first.get("file") or ""),
                     "line": first.get("line") if isinstance(first.get("line"), int) else None,
                     "text": ("; ".join(c.reasons) or state)[:2000], "source": None, "role": state,
                     "reason": "; ".join(c.reasons)[:4000] or None, "rules_sha256": sha256, "run_id": run_id})
    return rows


def paper_package_labels(session, paper_id: int, catalog: Catalog) -> tuple[list[str], str]:  # type: ignore[no-untyped-def]
    """The paper's own package labels (P4): the newest human answer, else the newest automated label."""
    human = session.scalars(select(HumanDecision).where(
        HumanDecision.paper_id == paper_id, HumanDecision.codebase_id.is_(None), HumanDecision.question == "P4",
        HumanDecision.deleted.is_(False)).order_by(HumanDecision.annotated_at.desc(), HumanDecision.id.desc())).first()
    if human is not None and isinstance(human.answer, list):
        return [str(a) for a in human.answer], f"the reviewer's P4 answer ({human.annotator})"
    label = session.scalars(select(PaperLabel).where(PaperLabel.paper_id == paper_id)
                            .order_by(PaperLabel.labeled_at.desc(), PaperLabel.id.desc())).first()
    if label is not None:
        return list(label.packages or []), "the paper's automated P4 label"
    return [], ""


def differs_from_paper(report: ScanReport, paper: list[str], where: str, catalog: Catalog) -> list[AntiFeature]:
    """Appendix B: the code's package differs from the one the paper cites (both known, none shared)."""
    generic = set(catalog.generic) | {"NONE", "none"}
    cited = {p for p in paper if p not in generic}
    used = set(report.packages_used) - {"custom"}
    if not cited or not used or cited & used:
        return []
    return [AntiFeature("package_differs_from_paper",
                        f"the code uses {', '.join(sorted(used))}; {where} cites {', '.join(sorted(cited))}")]


def _finding_text(e) -> str:  # type: ignore[no-untyped-def]
    flags = [f for f, on in (("commented", e.commented), ("superseded", e.superseded)) if on]
    cell = f"[cell {e.cell}] " if e.cell else ""
    return (cell + e.text + (f"  ({', '.join(flags)})" if flags else ""))[:2000]
