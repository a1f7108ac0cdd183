"""Writing reviewers' annotations into `HumanDecision` rows, idempotently.

One row per (origin, annotation id, question). A rerun changes nothing unless the
annotation changed: an updated annotation updates its rows (a question no longer
answered is marked deleted), a cancelled (skipped) annotation marks its rows deleted,
and after a complete listing every row of that origin whose annotation has disappeared
is marked deleted. Rows are never removed, so the history stays auditable.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.db.models import HumanDecision
from review.labelstudio.tasks import LabelConfig, answers_of


def parse_time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, str) and value:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    return datetime.now(timezone.utc)


def annotator_of(completed_by: Any, users: dict[int, str]) -> str:
    """A stable annotator name: the e-mail when known, else user:<id>."""
    if isinstance(completed_by, dict):
        return completed_by.get("email") or f"user:{completed_by.get('id')}"
    if isinstance(completed_by, int):
        return users.get(completed_by, f"user:{completed_by}")
    return str(completed_by or "unknown")


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _aware(dt: datetime | None) -> datetime | None:
    if dt is not None and dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt


def ingest(session: Session, *, origin: str, kind: str, item_id: int, task_ref: str,
           annotations: Iterable[dict[str, Any]], users: dict[int, str], config: LabelConfig,
           seen: set[str], counts: Counter[str], run_id: int | None, partial: set[str] = frozenset()) -> None:
    """Upsert the decisions of one task's annotations.

    `partial` names annotations that lost a malformed result item at the boundary
    (`review.labelstudio.shapes`): their questions not seen now are kept, not withdrawn.
    """
    annotations = list(annotations)
    refs = [str(a["id"]) for a in annotations if a.get("id") is not None]
    existing: dict[tuple[str, str], HumanDecision] = {}
    if refs:
        for row in session.scalars(select(HumanDecision).where(HumanDecision.origin == origin,
                                                               HumanDecision.annotation_ref.in_(refs))):
            existing[(row.annotation_ref, row.question)] = row
    for ann in annotations:
        if ann.get("id") is None:
            continue
        ref = str(ann["id"])
        seen.add(ref)
        cancelled = bool(ann.get("was_cancelled"))
        answers = {} if cancelled else answers_of(ann.get("result") or [], config)
        when = parse_time(ann.get("updated_at") or ann.get("created_at"))
        who = annotator_of(ann.get("completed_by"), users)
        for question, answer in answers.items():
            row = existing.pop((ref, question), None)
            if row is None:
                session.add(HumanDecision(
                    paper_id=item_id if kind == "papers" else None, codebase_id=item_id if kind == "code" else None,
                    question=question, answer=answer, annotator=who, annotated_at=when, origin=origin,
                    task_ref=task_ref, annotation_ref=ref, deleted=False, run_id=run_id))
                counts["new"] += 1
            elif row.deleted or not _same(row.answer, answer) or _aware(row.annotated_at) != when \
                    or row.annotator != who:
                row.answer, row.annotated_at, row.annotator, row.deleted, row.run_id = answer, when, who, False, run_id
                counts["updated"] += 1
            else:
                counts["unchanged"] += 1
        for (r, _q), row in list(existing.items()):
            if r == ref and not row.deleted and ref not in partial:  # the question is no longer answered (or the annotation was skipped)
                row.deleted, row.run_id = True, run_id
                counts["withdrawn"] += 1
                del existing[(r, _q)]


def mark_missing_deleted(session: Session, origin: str, seen: set[str], run_id: int | None) -> int:
    """After a complete listing: annotations no longer at the origin are marked deleted."""
    rows = session.scalars(select(HumanDecision).where(HumanDecision.origin == origin,
                                                       HumanDecision.deleted.is_(False))).all()
    n = 0
    for row in rows:
        if row.annotation_ref not in seen:
            row.deleted, row.run_id = True, run_id
            n += 1
    return n


__all__ = ["annotator_of", "ingest", "mark_missing_deleted", "parse_time"]
