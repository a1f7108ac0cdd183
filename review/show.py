"""`review show ID`: everything the database knows about one paper, in one place.

Why: a reviewer who doubts a figure needs to see the paper behind it: its automated
labels per rule set with the evidence and the page each snippet is on, the human
answers (who, when, from where, withdrawn or not), what compute made of them, its
codebases, and the runs that touched it. Papers are named by their public id (the
Anthology id or the `ident` a source gave, a DOI, an arXiv id, or an ident it had before
a re-key), never by the database's row numbers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from review.db.models import (Codebase, Document, Finding, HumanDecision, Paper, PaperLabel, PaperText,
                              Reproducibility, Run)
from review.db.models import RuleSet as RuleSetRow
from review.errors import InputFileError

MAX_EVIDENCE_PER_RULE_SET = 40


@dataclass
class PaperView:
    """What `review show` prints; `as_dict()` is the `--json` shape."""

    paper: dict[str, Any]
    document: dict[str, Any] | None = None
    texts: list[dict[str, Any]] = field(default_factory=list)
    labels: list[dict[str, Any]] = field(default_factory=list)  # one per rule set, newest first, with evidence
    human: list[dict[str, Any]] = field(default_factory=list)
    computed: dict[str, Any] | None = None
    codebases: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)  # runs that wrote a row of this paper

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Pages:
    """Where each page of a stored text starts, so evidence can name its page.

    Why estimated: the stored text is the whole document normalized in one piece (page
    breaks are not kept), so the PDF's pages are read again and normalized one by one,
    and their lengths, scaled to the stored text's, give each page's first character.
    A snippet near a page break may be named one page off; everywhere else it is exact
    up to that scaling."""

    def __init__(self, starts: list[int]):
        self.starts = starts

    def at(self, offset: int) -> int:
        from bisect import bisect_right

        return max(1, bisect_right(self.starts, offset))


def read_pages(pdf: Path, backend: str, stored_chars: int) -> Pages | None:
    """The page starts of a stored PDF's text; None when the file is gone or unreadable."""
    from review.extract.backends import get_backend
    from review.extract.normalize import normalize_pages

    if not pdf.is_file() or stored_chars <= 0:
        return None
    try:
        raw = get_backend(backend)(pdf)
    except Exception:  # a PDF that extracted once and no longer does: no page numbers, not a failure
        return None
    lengths = [len(normalize_pages([page])) + 1 for page in raw.pages]
    total = sum(lengths) or 1
    starts, at = [], 0.0
    for n in lengths:
        starts.append(round(at))
        at += n * stored_chars / total
    return Pages(starts)


def find_paper(session: Session, ref: str) -> Paper:
    """The paper a public id names: ident, DOI (any case, with or without doi.org), arXiv id
    or a former ident; an error listing near idents otherwise."""
    ref = ref.strip()
    doi = ref.lower().removeprefix("https://doi.org/").removeprefix("doi:")
    paper = session.scalar(select(Paper).where(or_(Paper.ident == ref, Paper.doi_key == doi, Paper.arxiv_id == ref)))
    if paper is None:
        paper = next((p for p in session.scalars(select(Paper).where(Paper.former_idents.isnot(None)))
                      if ref in (p.former_idents or [])), None)
    if paper is None:
        near = list(session.scalars(select(Paper.ident).where(Paper.ident.ilike(f"%{ref[:12]}%")).order_by(Paper.ident).limit(5)))
        raise InputFileError("no paper with this id (Anthology id, ident, DOI or arXiv id)", item=ref,
                             hint=("did you mean: " + ", ".join(near)) if near else "`review export` lists every paper's ident")
    return paper


def show_paper(session: Session, ref: str, *, evidence: int = MAX_EVIDENCE_PER_RULE_SET,
               pdf_dirs: tuple[Path, ...] = ()) -> PaperView:
    """Everything stored about one paper; reads only. `pdf_dirs` are where the PDF store may
    be (the data folder), for the evidence's page numbers."""
    p = find_paper(session, ref)
    view = PaperView(paper={"ident": p.ident, "title": p.title, "year": p.year, "venue": p.venue, "doi": p.doi,
                            "arxiv_id": p.arxiv_id, "url": p.url, "pdf_url": p.pdf_url, "source": p.source,
                            "former_idents": list(p.former_idents or []),
                            "pdf_unresolved_reason": p.pdf_unresolved_reason})
    runs: set[int] = set()
    doc = session.scalar(select(Document).where(Document.paper_id == p.id))
    if doc is not None:
        view.document = {"outcome": doc.outcome, "reason": doc.reason, "detail": doc.detail, "path": doc.path,
                         "sha256": doc.sha256, "url": doc.final_url or doc.url}
        _add(runs, doc.run_id)
    texts = list(session.scalars(select(PaperText).where(PaperText.paper_id == p.id).order_by(PaperText.id)))
    for t in texts:
        view.texts.append({"source": t.source, "outcome": t.outcome, "reason": t.reason, "chars": t.chars,
                           "pages": t.pages, "extractor": f"{t.extractor or ''} {t.extractor_version or ''}".strip()})
        _add(runs, t.run_id)
    text = next((t for t in texts if t.outcome == "ok" and t.content), None)
    pages = None
    if text is not None and text.source == "pdf" and doc is not None and doc.path:
        pdf = next((d / doc.path for d in pdf_dirs if (d / doc.path).is_file()), Path(doc.path))
        pages = read_pages(pdf, (text.extractor or "pypdfium2"), len(text.content or ""))
    view.labels = _labels(session, p.id, pages, evidence, runs)
    view.human = [{"question": d.question, "answer": d.answer, "annotator": d.annotator,
                   "annotated_at": d.annotated_at, "origin": d.origin, "withdrawn": d.deleted}
                  for d in session.scalars(select(HumanDecision).where(HumanDecision.paper_id == p.id)
                                           .order_by(HumanDecision.question, HumanDecision.annotated_at))]
    runs.update(d.run_id for d in session.scalars(select(HumanDecision).where(HumanDecision.paper_id == p.id)) if d.run_id)
    view.computed = _computed(session, p.id, runs)
    view.codebases = [{"url": c.url, "official": c.official, "lookup": c.lookup_status, "scan": c.scan_outcome,
                       "scan_reason": c.scan_reason, "packages": list(c.packages or []),
                       "eval_reproducible": c.eval_reproducible}
                      for c in session.scalars(select(Codebase).where(Codebase.paper_id == p.id).order_by(Codebase.url))]
    view.history = [{"run": r.id, "command": r.command, "status": r.status, "started_at": r.started_at}
                    for r in session.scalars(select(Run).where(Run.id.in_(runs)).order_by(Run.id))] if runs else []
    return view


def _add(runs: set[int], run_id: int | None) -> None:
    if run_id:
        runs.add(run_id)


def _labels(session: Session, paper_id: int, pages: Pages | None, evidence: int, runs: set[int]) -> list[dict[str, Any]]:
    out = []
    rows = session.execute(select(PaperLabel, RuleSetRow).join(RuleSetRow, RuleSetRow.id == PaperLabel.rule_set_id)
                           .where(PaperLabel.paper_id == paper_id).order_by(PaperLabel.rule_set_id.desc()))
    for label, rs in rows:
        findings = list(session.scalars(select(Finding).where(Finding.paper_id == paper_id, Finding.rule_set_id == rs.id)
                                        .order_by(Finding.start).limit(evidence)))
        total = session.scalar(select(func.count()).select_from(Finding)
                               .where(Finding.paper_id == paper_id, Finding.rule_set_id == rs.id)) or 0
        out.append({"rule_set": rs.name, "rules_sha256": rs.sha256, "prelim": label.prelim, "computes": label.computes,
                    "packages": list(label.packages or []), "params": list(label.params or []),
                    "variants": list(label.variants or []), "protocol": list(label.protocol or []),
                    "code_urls": list(label.code_urls or []), "labeled_at": label.labeled_at,
                    "evidence": [{"label": f.label, "rule": f.rule_id, "kind": f.kind,
                                  "page": pages.at(f.start) if pages else None,
                                  "start": f.start, "end": f.end, "snippet": f.snippet} for f in findings],
                    "evidence_total": total})
        _add(runs, label.run_id)
    return out


def _computed(session: Session, paper_id: int, runs: set[int]) -> dict[str, Any] | None:
    r = session.scalar(select(Reproducibility).where(Reproducibility.paper_id == paper_id))
    if r is None:
        return None
    _add(runs, r.run_id)
    return {"computes": r.paper_metric, "r1": r.r1, "r2": r.r2, "r3": r.r3, "reproducible": r.reproducible,
            "software_error": r.software_error, "packages": list(r.packages or []), "label_source": r.label_source,
            "sources": dict(r.sources or {}), "computed_at": r.computed_at}
