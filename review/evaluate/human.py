"""`review evaluate human`: a stored rule set's labels measured against the resolved human answers.

Every human pass is also a gold set: the reviewers' answers, resolved by the one rule of
`review.resolution`, are what the automated labels of the same papers should have been.
The scores are those of `review evaluate papers` (`review.evaluate.score`), so both read
alike, with per-rule precision from the stored findings.

`review evaluate human` resolves the answers here, in memory, from the live decisions
(`live_votes` and `resolve_votes`), never by refreshing the stored resolutions:
evaluating writes nothing. `review status` and the report read the resolutions pull and
compute stored instead (`stored=True`): a pass over every decision would make status slow,
and the report must describe the human answers the dataset rests on.
A question the reviewers left tied or "can't tell" has no human answer and is left out
(a paper whose P0 is disputed is left out as a whole); the result counts what was left
out and why. Code URLs are not a question of the paper form, so they are not scored.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from sqlalchemy import select
from sqlalchemy.orm import Session

from review.answers import PARAMS, normalize_param, parse_answer
from review.db.models import Finding, HumanResolution, Paper, PaperLabel, RuleSet
from review.errors import RuleFileError
from review.evaluate.papers import _evidence
from review.evaluate.score import Disagreement, Pair, RuleScore, Scores, rule_precision, score_pairs
from review.resolution import DISPUTED, Vote, live_votes, resolve_votes

PAPER_QUESTIONS = ("P0", "P1", "P2", "P3", "P4")
NOT_LABELLED = "no automated labels under this rule set"
NO_P0 = "no human P0 (only other questions answered)"
CHUNK = 900  # paper ids per IN list: under the 999 bound parameters of older SQLite builds
P1_STRINGS_NOT_GIVEN = "yes, strings not given"  # P1 answered "lists parameters" without copying them


@dataclass
class HumanAnswers:
    """One paper's resolved answers (parsed) and the status of every question reviewers answered."""

    answers: dict[str, Any] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    reviewers: dict[str, int] = field(default_factory=dict)


@dataclass
class HumanEvaluation:
    """What `review evaluate human` reports for one stored rule set."""

    rule_set: str
    rules_sha256: str
    scores: Scores
    rule_scores: list[RuleScore]
    reviewed: int = 0  # papers with at least one resolved or disputed paper question
    left_out: dict[str, int] = field(default_factory=dict)  # reason -> papers left out as a whole
    questions_left_out: dict[str, dict[str, int]] = field(default_factory=dict)  # question -> {reason: papers}
    p1_listed_only: int = 0  # P1 scored as "lists parameters" only (strings not given)

    def metrics(self) -> dict[str, float | None]:
        return self.scores.metrics()

    def as_dict(self) -> dict[str, Any]:
        return {"rule_set": self.rule_set, "rules_sha256": self.rules_sha256, "reviewed": self.reviewed,
                "scored": self.scores.items, "left_out": dict(sorted(self.left_out.items())),
                "questions_left_out": {q: dict(sorted(r.items())) for q, r in sorted(self.questions_left_out.items())},
                "p1_listed_only": self.p1_listed_only, "scores": self.scores.as_dict(),
                "disagreements": [d.as_dict() for d in self.scores.disagreements],
                "rules_precision": [r.as_dict() for r in self.rule_scores]}


def resolved_paper_answers(session: Session, *, stored: bool = False) -> dict[int, HumanAnswers]:
    """Paper id -> its resolved P0-P4, by the one resolution rule, without storing anything.

    By default the live decisions are resolved afresh (exact, but a pass over every
    decision); `stored` reads the resolutions pull and compute last stored instead (what
    the dataset's human answers are; cheap enough for `review status`).
    """
    out: dict[int, HumanAnswers] = defaultdict(HumanAnswers)
    for paper_id, question, res in _stored(session) if stored else _fresh(session):
        if res["status"] == "none":
            continue
        human = out[paper_id]
        value = None if res["status"] in DISPUTED else parse_answer(question, res["answer"])
        human.status[question] = res["status"] if value is not None or res["status"] in DISPUTED else "unreadable"
        human.reviewers[question] = res["reviewers"]
        if value is not None:
            human.answers[question] = value
    return dict(out)


def _fresh(session: Session) -> Iterator[tuple[int, str, dict[str, Any]]]:
    groups: dict[tuple[int, str], list[Vote]] = defaultdict(list)
    for v in live_votes(session):
        if v.kind == "papers" and v.question in PAPER_QUESTIONS:
            groups[(v.item_id, v.question)].append(v)
    for (paper_id, question), votes in groups.items():
        yield paper_id, question, resolve_votes(votes)


def _stored(session: Session) -> Iterator[tuple[int, str, dict[str, Any]]]:
    rows = session.execute(select(HumanResolution.item_id, HumanResolution.question, HumanResolution.status,
                                  HumanResolution.answer, HumanResolution.reviewers)
                           .where(HumanResolution.kind == "papers", HumanResolution.question.in_(PAPER_QUESTIONS)))
    for item, question, status, answer, reviewers in rows:
        yield item, question, {"status": status, "answer": answer, "reviewers": reviewers}


def automated_labels(session: Session, rule_set_id: int, paper_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Paper id -> the rule set's stored labels as a score label dict."""
    columns = (PaperLabel.paper_id, PaperLabel.computes, PaperLabel.params, PaperLabel.variants, PaperLabel.protocol,
               PaperLabel.packages, PaperLabel.code_urls)
    rows = [r for chunk in _chunks(paper_ids) for r in session.execute(
        select(*columns).where(PaperLabel.rule_set_id == rule_set_id, PaperLabel.paper_id.in_(chunk)))]
    return {pid: {"P0": bool(computes), "P1": _params(params or []), "P2": list(variants or []),
                  "P3": list(protocol or []), "P4": list(packages or []), "code_urls": list(code_urls or [])}
            for pid, computes, params, variants, protocol, packages, code_urls in rows}


def stored_matches(session: Session, rule_set_id: int, paper_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """Paper id -> the rule set's stored findings, in the shape `rule_precision` reads."""
    out: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = [r for chunk in _chunks(paper_ids) for r in session.execute(
        select(Finding.paper_id, Finding.rule_id, Finding.kind, Finding.label, Finding.match, Finding.start,
               Finding.snippet)
        .where(Finding.rule_set_id == rule_set_id, Finding.paper_id.in_(chunk))
        .order_by(Finding.paper_id, Finding.start, Finding.id))]
    for pid, rule, kind, label, match, start, snippet in rows:
        value = normalize_param(match) if kind == "params" else match
        out[pid].append({"rule": rule, "kind": kind, "label": label, "match": value, "start": start,
                         "snippet": snippet})
    return out


def _chunks(ids: Iterable[int], size: int = CHUNK) -> list[list[int]]:
    """Sorted ids in slices, so no IN list outgrows a database's limit on bound parameters."""
    ordered = sorted(set(ids))
    return [ordered[i:i + size] for i in range(0, len(ordered), size)]


def _params(strings: Iterable[str]) -> list[str]:
    """Parameter strings in the human pass's one spelling per string."""
    return sorted({normalize_param(x) for x in strings if x.strip()})


def _expected(human: HumanAnswers, questions_left_out: dict[str, Counter[str]]) -> tuple[dict[str, Any], bool]:
    """The score label dict of one paper's human answers, and whether P1 is "yes" without strings.

    Disputed questions are left out (and counted); "yes" to P1 without strings scores
    "lists parameters" only, since there are no strings to compare.
    """
    expected: dict[str, Any] = {"P0": human.answers["P0"]}
    listed_only = False
    if not expected["P0"]:
        return expected, listed_only
    for q in PAPER_QUESTIONS[1:]:
        if q in human.answers:
            value = human.answers[q]
            if q == PARAMS and value is True:
                listed_only = True
                questions_left_out[q][P1_STRINGS_NOT_GIVEN] += 1
            elif q == PARAMS:
                expected[q] = [] if value is False else _params(value)
            else:
                expected[q] = list(value)
        elif q in human.status:
            questions_left_out[q][human.status[q]] += 1
    return expected, listed_only


def evaluate_human(session: Session, rule_set: RuleSet, *, stored: bool = False,
                   evidence: bool = True) -> HumanEvaluation:
    """Score one stored rule set's labels on every paper with a resolved human P0
    (`stored`: the stored resolutions, see `resolved_paper_answers`). Without `evidence`
    the findings are not read: no per-rule precision, no evidence behind disagreements
    (the scores alone, for `review status`)."""
    humans = resolved_paper_answers(session, stored=stored)
    labels = automated_labels(session, rule_set.id, humans)
    idents = {pid: ident for chunk in _chunks(humans)
              for pid, ident in session.execute(select(Paper.id, Paper.ident).where(Paper.id.in_(chunk)))}
    left_out: Counter[str] = Counter()
    questions_left_out: dict[str, Counter[str]] = defaultdict(Counter)
    pairs: list[Pair] = []
    listed_only: dict[str, bool] = {}  # item -> proposed "lists parameters", for P1 "yes" without strings
    by_item: dict[str, tuple[int, dict[str, Any]]] = {}
    for pid in sorted(humans, key=lambda p: idents.get(p, str(p))):
        human, item = humans[pid], idents.get(pid, str(pid))
        if "P0" not in human.answers:
            status = human.status.get("P0")
            left_out[f"P0 {status}" if status else NO_P0] += 1
            continue
        if pid not in labels:
            left_out[NOT_LABELLED] += 1
            continue
        expected, only = _expected(human, questions_left_out)
        if only:
            listed_only[item] = bool(labels[pid]["P1"])
        pairs.append(Pair(item, expected, labels[pid]))
        by_item[item] = (pid, expected)
    scores = score_pairs(pairs)
    _score_listed_only(scores, listed_only)
    rule_scores = _explain(session, rule_set, scores, by_item, humans) if evidence else []
    return HumanEvaluation(rule_set.name, rule_set.sha256, scores, rule_scores, reviewed=len(humans),
                           left_out=dict(left_out),
                           questions_left_out={q: dict(c) for q, c in questions_left_out.items()},
                           p1_listed_only=len(listed_only))


def _explain(session: Session, rule_set: RuleSet, scores: Scores, by_item: dict[str, tuple[int, dict[str, Any]]],
             humans: dict[int, HumanAnswers]) -> list[RuleScore]:
    """The stored findings behind each disagreement, and per-rule precision over them."""
    matches = stored_matches(session, rule_set.id, [pid for pid, _ in by_item.values()])
    for d in scores.disagreements:
        pid, _ = by_item[d.item]
        d.evidence = _evidence(d.question, d.extra, d.proposed, matches.get(pid, []))
        d.expected_evidence = _tally(humans[pid], d.question)
    return rule_precision((expected, matches.get(pid, [])) for pid, expected in by_item.values())


def _score_listed_only(scores: Scores, listed_only: dict[str, bool]) -> None:
    """P1 "yes" without strings: counted in P1.listed (and as a disagreement when no strings were found)."""
    for item, proposed in sorted(listed_only.items()):
        scores.p1_listed.add(frozenset({"P1"}), frozenset({"P1"} if proposed else ()))
        if not proposed:
            scores.disagreements.append(Disagreement(item, "P1", True, False))


def _tally(human: HumanAnswers, question: str) -> str:
    """What the human answer rests on, shown beside a disagreement."""
    n = human.reviewers.get(question, 0)
    return f"human answer: {human.status.get(question, 'none')}, {n} reviewer{'s' if n != 1 else ''}"


def stored_rule_set(session: Session, ruleset: Any) -> RuleSet:
    """The stored version of a loaded rule file; its labels must exist to be evaluated."""
    row = session.scalar(select(RuleSet).where(RuleSet.sha256 == ruleset.sha256))
    if row is None or session.scalar(select(PaperLabel.id).where(PaperLabel.rule_set_id == row.id).limit(1)) is None:
        raise RuleFileError(f"no stored labels of this version ({ruleset.sha256[:12]})",
                            item=str(ruleset.path or ruleset.name),
                            hint="run `review label` with it first, or name a stored version with --rule-set "
                                 "(`review label --list`)")
    return row
