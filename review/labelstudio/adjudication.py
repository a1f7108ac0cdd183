"""Adjudication tasks: the dispute in front of the adjudicator, and nothing pre-filled for it.

An adjudication task is the review task of the item plus a panel naming each disputed
question with every reviewer's answer. Its prediction pre-fills only the questions the
reviewers settled (their resolved answers, so the form shows what depends on them);
disputed questions start empty, and the adjudicator's answers count only for them (see
`review.resolution`). `model_version` is a digest of the dispute, so a rerun of
`review queue ... --select disputed` refreshes a task whose dispute changed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.answers import UNSURE, parse_answer
from review.db.models import HumanResolution
from review.labelstudio.tasks import Candidate, LabelConfig, build_task, label_config, prediction_result
from review.resolution import disputes

PURPOSE = "adjudication"
PANEL = ('<Header value="Adjudication: answer the disputed questions below; the others are pre-filled with what '
         'the reviewers resolved and are not counted" size="4"/>\n  <Text name="dispute" value="$dispute"/>\n')

Dispute = dict[str, list[tuple[str, Any]]]


def adjudication_config(kind: str, settings: Any = None) -> LabelConfig:
    """The review form with the dispute panel at the top."""
    base = label_config(kind, settings)
    head, sep, rest = base.xml.partition("<View>")
    return LabelConfig(base.kind, f"{head}{sep}\n  {PANEL}{rest}", base.questions, base.no_evidence)


def dispute_text(dispute: Dispute) -> str:
    """One line per disputed question: every reviewer and their answer."""
    lines = []
    for question in sorted(dispute):
        answers = "; ".join(f"{who}: {_shown(answer)}" for who, answer in dispute[question])
        lines.append(f"{question} is disputed: {answers}")
    return "\n".join(lines) or "nothing is disputed any more"


def _shown(answer: Any) -> str:
    if isinstance(answer, list):
        return ", ".join(map(str, answer)) or "NONE"
    return str(answer)


def _choices(value: Any) -> Any:
    """A resolved answer in the form's choice values."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return value or ["NONE"]
    return value


def settled_answers(session: Session, kind: str, item_id: int, config: LabelConfig) -> dict[str, Any]:
    """The questions the reviewers settled, as answers the form can show."""
    out: dict[str, Any] = {}
    for r in session.scalars(select(HumanResolution).where(HumanResolution.kind == kind,
                                                           HumanResolution.item_id == item_id)):
        if r.needs_adjudication or r.answer is None or r.question not in config.questions:
            continue
        value = parse_answer(r.question, r.answer)
        if value is None or value == UNSURE:
            continue
        spec = config.questions[r.question]
        if spec.tag == "textarea":
            if isinstance(value, list) and value:  # an empty text area needs no pre-filling
                out[r.question] = value
        else:
            out[r.question] = _choices(value)
    return out


def adjudication_task(session: Session, cand: Candidate, config: LabelConfig, dispute: Dispute,
                      pdf_root: Path | None = None) -> dict[str, Any]:
    """The review task's data plus the dispute; pre-filled only where nothing is disputed."""
    task = build_task(session, cand, config, pdf_root)
    text = dispute_text(dispute)
    task["data"]["dispute"] = text
    task["data"]["purpose"] = PURPOSE
    settled = {q: a for q, a in settled_answers(session, cand.kind, cand.item_id, config).items() if q not in dispute}
    ordered = {q: settled[q] for q in config.questions if q in settled}
    version = "adjudication:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    task["predictions"] = [{"model_version": version, "result": prediction_result(ordered, config)}]
    return task


def adjudication_tasks(session: Session, kind: str, chosen: list[Candidate],
                       config: LabelConfig) -> list[tuple[Candidate, dict[str, Any]]]:
    """Every chosen item's adjudication task (the chosen items are the disputed ones)."""
    found = disputes(session, kind)
    return [(c, adjudication_task(session, c, config, found.get(c.item_id, {}))) for c in chosen]
