"""From several reviewers' answers to one answer per question, or a call for adjudication.

Per item and question, each reviewer's latest live answer counts once. An answer from an
adjudication project wins outright (`adjudicated`). Otherwise: one reviewer gives
`single`; all the same gives `agreed`; more than half the same gives `majority`; anything
else (a tie, or no answer with a majority) is `tie` and marked for adjudication, which
`review queue ... --select disputed` sends to an adjudication project.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.db.models import HumanDecision, HumanProject, HumanResolution


def answer_key(answer: Any) -> str:
    """A canonical text for comparing answers (lists compare as sets)."""
    if isinstance(answer, list):
        answer = sorted(answer)
    return json.dumps(answer, sort_keys=True, ensure_ascii=False)


@dataclass
class Vote:
    kind: str
    item_id: int
    question: str
    annotator: str
    answer: Any
    adjudication: bool
    when: Any


def live_votes(session: Session, *, include_adjudication: bool = True) -> list[Vote]:
    """Each annotator's latest live answer per item and question (notes left out)."""
    purposes = dict(session.execute(select(HumanProject.origin, HumanProject.purpose)).all())
    rows = session.execute(select(HumanDecision.paper_id, HumanDecision.codebase_id, HumanDecision.question,
                                  HumanDecision.annotator, HumanDecision.answer, HumanDecision.origin,
                                  HumanDecision.annotated_at, HumanDecision.id)
                           .where(HumanDecision.deleted.is_(False), HumanDecision.question != "note")
                           .order_by(HumanDecision.annotated_at, HumanDecision.id))
    latest: dict[tuple[str, int, str, str, bool], Vote] = {}
    for paper_id, codebase_id, question, annotator, answer, origin, when, _ in rows:
        kind, item = ("papers", paper_id) if paper_id is not None else ("code", codebase_id)
        adj = purposes.get(origin) == "adjudication"
        if adj and not include_adjudication:
            continue
        latest[(kind, item, question, annotator, adj)] = Vote(kind, item, question, annotator, answer, adj, when)
    return list(latest.values())


def resolve_votes(votes: Iterable[Vote]) -> dict[str, Any]:
    """Status, answer and tally for the votes on one item and question."""
    votes = list(votes)
    adjudicated = [v for v in votes if v.adjudication]
    reviews = [v for v in votes if not v.adjudication]
    tally: dict[str, dict[str, Any]] = {}
    for v in reviews:
        t = tally.setdefault(answer_key(v.answer), {"answer": v.answer, "count": 0, "annotators": []})
        t["count"] += 1
        t["annotators"].append(v.annotator)
    ranked = sorted(tally.values(), key=lambda t: (-t["count"], answer_key(t["answer"])))
    for t in ranked:
        t["annotators"].sort()
    n = len(reviews)
    if adjudicated:
        final = max(adjudicated, key=lambda v: v.when)
        return {"status": "adjudicated", "answer": final.answer, "votes": ranked, "reviewers": n,
                "needs_adjudication": False}
    if n == 0:
        return {"status": "none", "answer": None, "votes": [], "reviewers": 0, "needs_adjudication": False}
    top = ranked[0]
    if n == 1:
        status = "single"
    elif len(ranked) == 1:
        status = "agreed"
    elif top["count"] * 2 > n:
        status = "majority"
    else:
        return {"status": "tie", "answer": None, "votes": ranked, "reviewers": n, "needs_adjudication": True}
    return {"status": status, "answer": top["answer"], "votes": ranked, "reviewers": n, "needs_adjudication": False}


def resolve_all(session: Session, run_id: int | None = None) -> dict[str, int]:
    """Recompute every resolution from the live decisions; returns counts per status."""
    groups: dict[tuple[str, int, str], list[Vote]] = defaultdict(list)
    for v in live_votes(session):
        groups[(v.kind, v.item_id, v.question)].append(v)
    existing = {(r.kind, r.item_id, r.question): r for r in session.scalars(select(HumanResolution))}
    counts: dict[str, int] = defaultdict(int)
    for key, votes in groups.items():
        res = resolve_votes(votes)
        counts[res["status"]] += 1
        row = existing.pop(key, None)
        if row is None:
            session.add(HumanResolution(kind=key[0], item_id=key[1], question=key[2], run_id=run_id, **res))
        elif (row.status, answer_key(row.answer), row.reviewers, row.needs_adjudication, json.dumps(row.votes, sort_keys=True)) != \
                (res["status"], answer_key(res["answer"]), res["reviewers"], res["needs_adjudication"],
                 json.dumps(res["votes"], sort_keys=True)):
            for k, v in res.items():
                setattr(row, k, v)
            row.run_id = run_id
    for row in existing.values():  # every decision behind it was withdrawn
        session.delete(row)
        counts["withdrawn"] += 1
    return dict(counts)
