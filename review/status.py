"""Where every paper stands: counts per stage and outcome, and the last runs."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from review.claims import held_by_others
from review.db.models import (Codebase, Document, HumanDecision, Paper, PaperLabel, PaperText, Run,
                              SourceRecord, WorkItem)
from review.runs import run_process_gone
from review.settings import Settings


@dataclass
class StatusReport:
    papers: int = 0
    records_by_source: dict[str, int] = field(default_factory=dict)
    stages: list[dict[str, Any]] = field(default_factory=list)  # {stage, outcome, reason, count}
    queue: list[dict[str, Any]] = field(default_factory=list)  # {stage, state, count}
    held: list[dict[str, Any]] = field(default_factory=list)  # {stage, items, workers, until, abandoned}
    runs: list[dict[str, Any]] = field(default_factory=list)
    agreement: list[dict[str, Any]] = field(default_factory=list)  # per question: alpha, kappa, units (review pull)
    human_evaluation: dict[str, Any] | None = None  # automated labels against the human answers (evaluate human)
    schema: str | None = None
    database: str = ""
    next: str = ""  # the next step, as a command and why

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _outcomes(session: Session, stage: str, model: Any, *where: Any) -> list[dict[str, Any]]:
    rows = session.execute(
        select(model.outcome, model.reason, func.count()).where(*where).group_by(model.outcome, model.reason)
        .order_by(model.outcome, model.reason)
    )
    return [{"stage": stage, "outcome": o, "reason": r, "count": n} for o, r, n in rows]


def build_status(session: Session, *, last_runs: int = 5, settings: Settings | None = None) -> StatusReport:
    report = StatusReport()
    report.papers = session.scalar(select(func.count()).select_from(Paper)) or 0
    report.records_by_source = dict(
        session.execute(select(SourceRecord.source, func.count()).group_by(SourceRecord.source)).all())
    report.stages.append({"stage": "harvested", "outcome": "ok", "reason": None, "count": report.papers})
    report.stages += _no_pdf_url(session)
    report.stages += _human(_outcomes(session, "download", Document))
    report.stages += _human(_outcomes(session, "extract", PaperText, PaperText.source == "pdf"))
    imported = session.execute(select(PaperText.source, func.count()).where(PaperText.source != "pdf")
                               .group_by(PaperText.source).order_by(PaperText.source))
    report.stages += [{"stage": "import texts", "outcome": src, "reason": None, "count": n} for src, n in imported]
    labeled = session.scalar(select(func.count(func.distinct(PaperLabel.paper_id)))) or 0
    report.stages.append({"stage": "label", "outcome": "ok", "reason": None, "count": labeled})
    codebases = session.scalar(select(func.count()).select_from(Codebase)) or 0
    report.stages.append({"stage": "codebases", "outcome": "linked", "reason": None, "count": codebases})
    reviewed = session.scalar(
        select(func.count(func.distinct(HumanDecision.paper_id))).where(HumanDecision.deleted.is_(False))) or 0
    report.stages.append({"stage": "human review", "outcome": "papers with decisions", "reason": None,
                          "count": reviewed})
    report.queue = [{"stage": st, "state": state, "count": n} for st, state, n in session.execute(
        select(WorkItem.stage, WorkItem.state, func.count()).group_by(WorkItem.stage, WorkItem.state)
        .order_by(WorkItem.stage, WorkItem.state))]
    claimed = sorted({q["stage"] for q in report.queue if q["state"] == "claimed"})
    report.held = [{"stage": st, **held_by_others(session, st).as_dict()} for st in claimed]
    runs = session.scalars(select(Run).order_by(Run.id.desc()).limit(last_runs))
    # A run left "running" by a process that is gone is shown as what it is; the next
    # command on that machine records it (review.runs.close_gone_runs).
    report.runs = [{"id": r.id, "command": r.command, "status": "interrupted" if run_process_gone(r) else r.status,
                    "started_at": r.started_at.isoformat() if r.started_at else None,
                    "finished_at": r.finished_at.isoformat() if r.finished_at else None,
                    "summary": r.summary, "counts": r.counts} for r in runs]
    from review.labelstudio.agreement import agreement_report  # the human pass's own statistics
    report.agreement = agreement_report(session)
    if settings is not None:
        report.human_evaluation = human_evaluation_block(session, settings)
    report.next = next_step(session)
    return report


# What the stages' reason words mean, for people (the words stay in --json and the database).
REASONS = {
    "http_404": "the server answered 404 Not Found", "http_403": "the server refused (403 Forbidden)",
    "not_pdf": "the URL served something that is not a PDF", "checksum_mismatch": "not the file the source's checksum names",
    "gave_up_after_retries": "the server kept failing; gave up after retries", "connection_error": "could not connect",
    "too_many_redirects": "too many redirects", "timeout": "took longer than the time limit",
    "corrupt": "the PDF cannot be read (corrupt or truncated)", "encrypted": "the PDF is encrypted",
    "no_text": "no text layer (a scan? review does not OCR)", "memory": "ran out of the memory limit",
    "crash": "the extractor crashed on it", "error": "an unexpected error (see the run's log)",
}


def human_reason(reason: str | None) -> str:
    """A reason word as a person reads it: `http_404` -> "the server answered 404 Not Found"."""
    if not reason:
        return ""
    if reason in REASONS:
        return REASONS[reason]
    if reason.startswith("http_") and reason[5:].isdigit():
        return f"the server answered {reason[5:]}"
    return reason.replace("_", " ")


def _human(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**r, "reason": human_reason(r["reason"])} for r in rows]


def _no_pdf_url(session: Session) -> list[dict[str, Any]]:
    """Papers nothing can be downloaded for, by the source's reason; imported papers (their
    PDF is already stored) are not among them."""
    has_document = select(Document.paper_id)
    rows = session.execute(select(Paper.pdf_unresolved_reason, func.count())
                           .where(Paper.pdf_url.is_(None), Paper.id.not_in(has_document))
                           .group_by(Paper.pdf_unresolved_reason).order_by(Paper.pdf_unresolved_reason))
    return [{"stage": "harvested", "outcome": "no PDF URL", "reason": human_reason(r) or "the source gives no PDF link",
             "count": n} for r, n in rows]


def _count(session: Session, query: Any) -> int:
    return session.scalar(select(func.count()).select_from(query.subquery())) or 0


def _last_run(session: Session, command: str) -> Any:
    return session.scalar(select(Run).where(Run.command == command, Run.status == "ok").order_by(Run.id.desc()).limit(1))


def next_step(session: Session) -> str:
    """The next command of the survey and why, from what the database holds: the first
    stage with work waiting, in the order `review survey` runs them."""
    if not (session.scalar(select(func.count()).select_from(Paper)) or 0):
        return ("review harvest acl (or review import pdfs DIR --create; review survey --sample for a demo): "
                "the database holds no papers")
    to_download = _count(session, select(Paper.id).where(Paper.pdf_url.isnot(None), Paper.id.not_in(select(Document.paper_id))))
    if to_download:
        return f"review download: {to_download} paper(s) have a PDF URL and no PDF yet"
    to_extract = _count(session, select(Document.paper_id).where(Document.outcome == "ok",
                                                                 Document.paper_id.not_in(select(PaperText.paper_id))))
    if to_extract:
        return f"review extract: {to_extract} downloaded PDF(s) have no text yet"
    to_label = _count(session, select(PaperText.paper_id).where(PaperText.outcome == "ok",
                                                                PaperText.paper_id.not_in(select(PaperLabel.paper_id))))
    if to_label:
        return f"review label: {to_label} text(s) have no labels yet"
    compute, export = _last_run(session, "compute"), _last_run(session, "export")
    later = [r for r in (_last_run(session, c) for c in ("label", "pull", "code scan", "code link")) if r is not None]
    if compute is None or any(r.id > compute.id for r in later):
        return "review compute: labels or answers changed since the last compute" if compute else \
            "review compute: the papers are labelled, nothing is computed yet"
    if export is None or export.id < compute.id:
        return "review export: the last compute is not exported yet"
    reviewed = session.scalar(select(func.count(func.distinct(HumanDecision.paper_id)))
                              .where(HumanDecision.deleted.is_(False))) or 0
    if not reviewed:
        return ("the human pass (review plan, review queue; docs/human-pass.md): every figure is an automated "
                "proposal until people check it")
    return "nothing waiting: rerun a stage after new papers or answers (review status --json for the counts)"


def human_evaluation_block(session: Session, settings: Settings) -> dict[str, Any] | None:
    """The headline of `review evaluate human` for the rule set compute reads; None without
    human answers (or without stored labels). Reads only."""
    from review.compute.stage import choose_rule_set, configured_rules
    from review.errors import ReviewError
    from review.evaluate.human import evaluate_human

    try:
        rule_set = choose_rule_set(session, settings.compute.rule_set, configured_rules(settings))
    except ReviewError:
        return None
    if rule_set is None:
        return None
    result = evaluate_human(session, rule_set, stored=True, evidence=False)  # as of the last pull or compute
    if not result.reviewed:
        return None
    m = result.metrics()
    return {"rule_set": result.rule_set, "rules_sha256": result.rules_sha256, "reviewed": result.reviewed,
            "scored": result.scores.items, "left_out": sum(result.left_out.values()),
            "disagreements": len(result.scores.disagreements),
            **{k: m[k] for k in ("P0.precision", "P0.recall", "P0.accuracy", "P1.listed.recall", "P2.exact",
                                 "P3.exact", "P4.exact")}}
