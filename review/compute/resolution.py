"""Human decisions as compute reads them: answers parsed, several reviewers resolved.

A human decision wins where one exists (non-deleted; several reviewers are resolved by
majority, see `resolve_decisions`); otherwise the automated label stands.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.db.models import HumanDecision, HumanProject
from review.log import get_logger

log = get_logger("compute")

BOOL_QUESTIONS = ("P0", "P1", "C0", "C2")
LIST_QUESTIONS = ("P2", "P3", "P4", "C1")


def parse_bool(answer: Any) -> bool | None:
    """A yes/no answer in any of the shapes Label Studio or a file may give it."""
    if isinstance(answer, dict):
        answer = answer.get("choices", answer.get("value", answer.get("answer")))
    if isinstance(answer, list):
        answer = answer[0] if len(answer) == 1 else None
    if isinstance(answer, bool):
        return answer
    if isinstance(answer, (int, float)) and answer in (0, 1):
        return bool(answer)
    if isinstance(answer, str):
        word = answer.strip().casefold()
        if word in ("yes", "true", "y", "1"):
            return True
        if word in ("no", "false", "n", "0"):
            return False
    return None


def parse_list(answer: Any) -> list[str] | None:
    """A multi-choice answer as a sorted list; "NONE" means the empty list."""
    if isinstance(answer, dict):
        answer = answer.get("choices", answer.get("value", answer.get("answer")))
    if isinstance(answer, str):
        answer = [answer]
    if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
        return None
    return sorted({a.strip() for a in answer if a.strip() and a.strip().casefold() != "none"})


def parse_params(answer: Any) -> bool | list[str] | None:
    """P1 is a yes/no, or (in our Label Studio config) the parameter strings the reviewer
    copied from the paper, one per line: any string means "yes, parameters are listed"."""
    flag = parse_bool(answer)
    if flag is not None:
        return flag
    strings = parse_list(answer)
    if strings is None:
        return None
    return [x for x in strings if x.casefold() not in ("no", "false")]


def parse_answer(question: str, answer: Any) -> Any:
    if question == "P1":
        return parse_params(answer)
    if question in BOOL_QUESTIONS:
        return parse_bool(answer)
    if question in LIST_QUESTIONS:
        return parse_list(answer)
    return None


@dataclass(frozen=True)
class Decision:
    question: str
    annotator: str
    annotated_at: datetime
    id: int
    value: Any  # bool or tuple of str
    adjudication: bool = False  # from an adjudication project: wins outright

    @property
    def vote(self) -> Any:
        """What is counted: for P1 parameter strings only whether there are any."""
        if self.question == "P1" and isinstance(self.value, tuple):
            return bool(self.value)
        return self.value


def resolve_decisions(decisions: Iterable[Decision]) -> dict[str, Any]:
    """One answer per question: each reviewer's latest answer counts once; majority wins.

    An answer from an adjudication project wins outright (as in review.labelstudio.resolve).
    A tie goes to the value given most recently among the tied ones, so the outcome does
    not depend on row order.
    """
    latest: dict[tuple[str, str], Decision] = {}
    for d in decisions:
        key = (d.question, d.annotator)
        prev = latest.get(key)
        if prev is None or (d.annotated_at, d.id) > (prev.annotated_at, prev.id):
            latest[key] = d
    by_question: dict[str, list[Decision]] = defaultdict(list)
    for (question, _), d in latest.items():
        by_question[question].append(d)
    out: dict[str, Any] = {}
    for question, ds in by_question.items():
        adjudicated = [d for d in ds if d.adjudication]
        if adjudicated:
            ds = adjudicated
        votes = Counter(d.vote for d in ds)
        top = max(votes.values())
        tied = {v for v, n in votes.items() if n == top}
        newest = max((d for d in ds if d.vote in tied), key=lambda d: (d.annotated_at, d.id))
        out[question] = list(newest.value) if isinstance(newest.value, tuple) else newest.value
    return out


def read_decisions(session: Session) -> tuple[dict[int, list[Decision]], dict[int, list[Decision]]]:
    """Every live decision, parsed, grouped by paper and by codebase."""
    by_paper: dict[int, list[Decision]] = defaultdict(list)
    by_code: dict[int, list[Decision]] = defaultdict(list)
    adjudication = set(session.scalars(select(HumanProject.origin).where(HumanProject.purpose == "adjudication")))
    rows = session.execute(select(HumanDecision.id, HumanDecision.paper_id, HumanDecision.codebase_id,
                                  HumanDecision.question, HumanDecision.answer, HumanDecision.annotator,
                                  HumanDecision.annotated_at, HumanDecision.origin)
                           .where(HumanDecision.deleted.is_(False)))
    for did, pid, cid, question, answer, annotator, at, origin in rows:
        value = parse_answer(question, answer)
        if value is None:
            if question in BOOL_QUESTIONS + LIST_QUESTIONS:
                log.warning("decision %s (%s by %s): answer %r not understood; ignored", did, question, annotator, answer)
            continue
        d = Decision(question, annotator, at, did, tuple(value) if isinstance(value, list) else value,
                     adjudication=origin in adjudication)
        if cid is not None:
            by_code[cid].append(d)
        elif pid is not None:
            by_paper[pid].append(d)
    return by_paper, by_code
