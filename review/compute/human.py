"""Human answers as compute reads them: the stored resolutions, brought up to date first.

The rule that turns several reviewers' answers into one lives in `review.resolution`
(pull uses it too); compute refreshes the stored resolutions with it, then reads them.
A question without a human answer but waiting for adjudication (a tie, or "can't tell")
is `disputed`: compute keeps the automated answer for it and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from review.answers import parse_answer
from review.log import get_logger
from review.resolution import read_resolutions, resolve_all

log = get_logger("compute")


@dataclass
class Human:
    """One item's resolved human answers (parsed) and its disputed questions."""

    answers: dict[str, Any] = field(default_factory=dict)
    disputed: set[str] = field(default_factory=set)


def human_inputs(session: Session, run_id: int | None = None) -> tuple[dict[int, Human], dict[int, Human]]:
    """(paper id -> Human, codebase id -> Human), after refreshing the stored resolutions."""
    resolve_all(session, run_id)
    papers: dict[int, Human] = {}
    codes: dict[int, Human] = {}
    for (kind, item), resolved in read_resolutions(session).items():
        human = Human()
        for r in resolved:
            if r.disputed:
                human.disputed.add(r.question)
                continue
            if r.answer is None:
                continue
            value = parse_answer(r.question, r.answer)
            if value is None:
                log.warning("%s %s, %s: resolved answer %r not understood; ignored", kind, item, r.question, r.answer)
                continue
            human.answers[r.question] = value
        (papers if kind == "papers" else codes)[item] = human
    return papers, codes
