"""One rule for human answers: several reviewers' answers become one answer per question.

Pull, file import, compute, agreement and `review queue --select disputed` all go through
here, so what pull reports is what compute uses. Per item and question each reviewer's
latest live answer counts once, compared as `review.answers.vote_value` says:

- a strict majority of the reviewers who answered gives the answer: `single` (one
  reviewer), `agreed` (all the same) or `majority`;
- no strict majority is a `tie`, or `unsure` when a reviewer chose "can't tell": there
  is no human answer, the question needs adjudication, and compute keeps the automated
  answer, flagged "disputed", until then;
- any "can't tell" queues the question for adjudication, even under a majority;
- an adjudication answer counts only for a question the reviewers left needing
  adjudication (`adjudicated`); on any other question it is ignored, and an
  adjudicator's own "can't tell" settles nothing.

P1 is resolved on "lists parameters" (yes/no); a "yes" answer carries the union of the
yes-voters' parameter strings (one per normalized form), so differently typed strings
never make a tie.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.answers import (BOOL_QUESTIONS, PARAMS, QUESTIONS, UNSURE, normalize_param, param_strings,
                            vote_value, yes_no)
from review.db.models import HumanDecision, HumanProject, HumanResolution

DISPUTED = ("tie", "unsure")  # statuses without a human answer, waiting for adjudication


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
                           .where(HumanDecision.deleted.is_(False), HumanDecision.question.in_(QUESTIONS))
                           .order_by(HumanDecision.annotated_at, HumanDecision.id))
    latest: dict[tuple[str, int, str, str, bool], Vote] = {}
    for paper_id, codebase_id, question, annotator, answer, origin, when, _ in rows:
        kind, item = ("papers", paper_id) if paper_id is not None else ("code", codebase_id)
        adj = purposes.get(origin) == "adjudication"
        if adj and not include_adjudication:
            continue
        latest[(kind, item, question, annotator, adj)] = Vote(kind, item, question, annotator, answer, adj, when)
    return list(latest.values())


def _shown(question: str, value: Any) -> Any:
    """How a compared value is written in a tally."""
    if value == UNSURE:
        return UNSURE
    if question == PARAMS or question in BOOL_QUESTIONS:
        return yes_no(bool(value))
    return list(value)


def _answer(question: str, value: Any, voters: list[Vote]) -> Any:
    """The stored answer of the winning value (P1 "yes": the voters' strings, when any)."""
    if question == PARAMS:
        if not value:
            return []
        strings: dict[str, str] = {}  # normalized form -> first spelling (reviewers in name order)
        for v in sorted(voters, key=lambda v: v.annotator):
            for text in param_strings(v.answer):
                strings.setdefault(normalize_param(text), text)
        return [strings[k] for k in sorted(strings)] or "yes"
    return _shown(question, value)


def resolve_votes(votes: Iterable[Vote]) -> dict[str, Any]:
    """Status, answer, tally and whether adjudication is needed, for one item and question."""
    votes = list(votes)
    question = votes[0].question if votes else ""
    groups: dict[Any, list[Vote]] = defaultdict(list)
    for v in sorted((v for v in votes if not v.adjudication), key=lambda v: v.annotator):
        value = vote_value(v.question, v.answer)
        if value is not None:  # an unreadable answer counts as not given
            groups[value].append(v)
    unsure = groups.pop(UNSURE, [])
    tally = [{"answer": _shown(question, value), "count": len(vs), "annotators": [v.annotator for v in vs]}
             for value, vs in groups.items()]
    if unsure:
        tally.append({"answer": UNSURE, "count": len(unsure), "annotators": [v.annotator for v in unsure]})
    ranked = sorted(tally, key=lambda t: (-t["count"], answer_key(t["answer"])))
    n = sum(len(vs) for vs in groups.values()) + len(unsure)
    if n == 0:
        return {"status": "none", "answer": None, "votes": [], "reviewers": 0, "needs_adjudication": False}
    best, voters = max(groups.items(), key=lambda kv: (len(kv[1]), answer_key(_shown(question, kv[0])))) \
        if groups else (None, [])
    if len(voters) * 2 > n:
        status = "single" if n == 1 else "agreed" if len(groups) == 1 and not unsure else "majority"
        answer, needs = _answer(question, best, voters), bool(unsure)
    else:
        status, answer, needs = ("unsure" if unsure else "tie"), None, True
    if needs:
        judged = [v for v in votes if v.adjudication and vote_value(v.question, v.answer) not in (None, UNSURE)]
        if judged:
            final = max(judged, key=lambda v: (v.when, v.annotator))
            status, needs = "adjudicated", False
            answer = _answer(question, vote_value(final.question, final.answer), [final])
    return {"status": status, "answer": answer, "votes": ranked, "reviewers": n, "needs_adjudication": needs}


def resolve_all(session: Session, run_id: int | None = None) -> dict[str, int]:
    """Bring every stored resolution up to date with the live decisions; counts per status."""
    groups: dict[tuple[str, int, str], list[Vote]] = defaultdict(list)
    for v in live_votes(session):
        groups[(v.kind, v.item_id, v.question)].append(v)
    existing = {(r.kind, r.item_id, r.question): r for r in session.scalars(select(HumanResolution))}
    counts: dict[str, int] = defaultdict(int)
    for key, votes in groups.items():
        res = resolve_votes(votes)
        if res["status"] == "none":  # nothing a reviewer answered (e.g. only an ignored adjudication)
            continue
        counts[res["status"]] += 1
        row = existing.pop(key, None)
        if row is None:
            session.add(HumanResolution(kind=key[0], item_id=key[1], question=key[2], run_id=run_id, **res))
        elif (row.status, answer_key(row.answer), row.reviewers, row.needs_adjudication,
              json.dumps(row.votes, sort_keys=True)) != \
                (res["status"], answer_key(res["answer"]), res["reviewers"], res["needs_adjudication"],
                 json.dumps(res["votes"], sort_keys=True)):
            for k, v in res.items():
                setattr(row, k, v)
            row.run_id = run_id
    for row in existing.values():  # every answer behind it was withdrawn
        session.delete(row)
        counts["withdrawn"] += 1
    session.flush()
    return dict(counts)


@dataclass(frozen=True)
class Resolved:
    """A stored resolution as compute reads it: the answer, or a dispute."""

    question: str
    answer: Any  # None when disputed
    disputed: bool


def read_resolutions(session: Session) -> dict[tuple[str, int], list[Resolved]]:
    """(kind, item id) -> its resolved questions."""
    out: dict[tuple[str, int], list[Resolved]] = defaultdict(list)
    rows = session.execute(select(HumanResolution.kind, HumanResolution.item_id, HumanResolution.question,
                                  HumanResolution.status, HumanResolution.answer))
    for kind, item, question, status, answer in rows:
        out[(kind, item)].append(Resolved(question, answer, status in DISPUTED))
    return out


def disputes(session: Session, kind: str) -> dict[int, dict[str, list[tuple[str, Any]]]]:
    """Items needing adjudication -> {question: [(reviewer, answer as tallied)]}, for the
    adjudicator's task (what each reviewer said, nothing pre-filled)."""
    wanted = {(r.item_id, r.question) for r in session.scalars(
        select(HumanResolution).where(HumanResolution.kind == kind, HumanResolution.needs_adjudication.is_(True)))}
    out: dict[int, dict[str, list[tuple[str, Any]]]] = defaultdict(dict)
    for v in sorted(live_votes(session, include_adjudication=False), key=lambda v: (v.question, v.annotator)):
        if v.kind == kind and (v.item_id, v.question) in wanted:
            value = vote_value(v.question, v.answer)
            shown = v.answer if value is None else _shown(v.question, value)
            if v.question == PARAMS and value is True:
                shown = param_strings(v.answer) or "yes"
            out[v.item_id].setdefault(v.question, []).append((v.annotator, shown))
    return dict(out)
