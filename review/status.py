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
    report.stages.append({"stage": "harvested", "outcome": "no PDF URL", "reason": "why: papers.pdf_unresolved_reason",
                          "count": session.scalar(select(func.count()).select_from(Paper).where(Paper.pdf_url.is_(None))) or 0})
    report.stages += _outcomes(session, "download", Document)
    report.stages += _outcomes(session, "extract", PaperText, PaperText.source == "pdf")
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
    return report


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
