"""Scores of proposed labels against expected ones, per question (GOLD.md "Scores a reader expects").

Everything here works on pairs of plain label dicts, `{"P0": bool, "P1": [...], "P2": [...],
"P3": [...], "P4": [...], "code_urls": [...]}`, whoever proposed or expected them: rule files
against a gold file (`review evaluate papers`) or against resolved human decisions. A
question absent from the expected dict was not answered on that item and is not scored
there; P1-P4 and code_urls are scored only on items expected to compute the metric (P0).

- P0 is binary (precision, recall, F1 of "computes", and accuracy).
- P1 is scored as "lists parameters" (binary) and as sets of parameter strings compared
  after collapsing whitespace (micro-averaged, plus the share of exactly right sets).
- P2, P3, P4 are sets per item: micro-averaged precision/recall/F1 per label and overall,
  and the share of items whose set is exactly right.
- code_urls are sets of repository keys (see `url_key`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from review.evaluate.thresholds import Threshold, Vocabulary
from review.evaluate.thresholds import check_thresholds as _check_thresholds
from review.evaluate.thresholds import parse_threshold as _parse_threshold

SET_QUESTIONS = ("P1", "P2", "P3", "P4", "code_urls")
LABELLED = ("P2", "P3", "P4")  # questions whose answers are labels from a vocabulary (scored per label)
KIND_QUESTION = {"flag": "P0", "params": "P1", "variant": "P2", "protocol": "P3", "package": "P4", "code_url": "code_urls"}
"""Which question a rule's matches answer, by the rule's kind."""

MEASURES = ("precision", "recall", "f1", "exact", "accuracy")
_CODE_HOSTS = ("github.com", "gitlab.com", "bitbucket.org")
_TRAILING = ".,;:)]}'\"/"


def collapse(text: str) -> str:
    """A parameter string with whitespace collapsed (how GOLD.md compares them)."""
    return " ".join(text.split())


def url_key(url: str) -> str:
    """What identifies a code URL: case, scheme, `www.` and trailing punctuation dropped; a
    GitHub/GitLab/Bitbucket link reduced to host/owner/name (a link into a repository
    names that repository)."""
    key = url.strip().lower().rstrip(_TRAILING)
    key = re.sub(r"^[a-z]+://", "", key)
    key = key.removeprefix("www.")
    host, _, rest = key.partition("/")
    if host in _CODE_HOSTS:
        parts = [p for p in rest.split("/") if p][:2]
        if len(parts) == 2 and parts[1].endswith(".git"):
            parts[1] = parts[1][: -len(".git")]
        key = "/".join([host, *parts])
    return key.rstrip(_TRAILING)


NORMALIZE: dict[str, Callable[[str], str]] = {"P1": collapse, "code_urls": url_key}


def normalized(question: str, values: Iterable[str] | None) -> frozenset[str]:
    norm = NORMALIZE.get(question, lambda v: v)
    return frozenset(n for n in (norm(v) for v in values or ()) if n)


@dataclass
class Counts:
    """True/false positives and false negatives; ratios are None when undefined (0/0)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, expected: frozenset[str], proposed: frozenset[str]) -> None:
        self.tp += len(expected & proposed)
        self.fp += len(proposed - expected)
        self.fn += len(expected - proposed)

    @property
    def precision(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)

    def as_dict(self) -> dict[str, Any]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": self.precision, "recall": self.recall,
                "f1": self.f1}


@dataclass
class SetScore:
    """One set-valued question over the items where it was scored."""

    question: str
    items: int = 0
    exact: int = 0
    overall: Counts = field(default_factory=Counts)
    labels: dict[str, Counts] = field(default_factory=dict)

    @property
    def exact_share(self) -> float | None:
        return _ratio(self.exact, self.items)

    def as_dict(self) -> dict[str, Any]:
        out = {"items": self.items, "exact": self.exact, "exact_share": self.exact_share, **self.overall.as_dict()}
        if self.question in LABELLED:
            out["labels"] = {k: v.as_dict() for k, v in sorted(self.labels.items())}
        return out


@dataclass
class Disagreement:
    """One item and question where the proposal differs from the expected answer."""

    item: str
    question: str
    expected: Any
    proposed: Any
    missing: list[str] = field(default_factory=list)  # expected, not proposed
    extra: list[str] = field(default_factory=list)  # proposed, not expected
    evidence: list[dict[str, Any]] = field(default_factory=list)  # what the proposal rests on
    expected_evidence: Any = None  # the gold file's snippet for this answer, when it has one

    def as_dict(self) -> dict[str, Any]:
        return {"item": self.item, "question": self.question, "expected": self.expected, "proposed": self.proposed,
                "missing": self.missing, "extra": self.extra, "evidence": self.evidence,
                "expected_evidence": self.expected_evidence}


@dataclass
class Scores:
    """Every score GOLD.md lists, plus the disagreements behind them."""

    items: int = 0
    computing: int = 0  # items expected to compute the metric (P0 true)
    p0: Counts = field(default_factory=Counts)
    p0_correct: int = 0
    p1_listed: Counts = field(default_factory=Counts)
    sets: dict[str, SetScore] = field(default_factory=lambda: {q: SetScore(q) for q in SET_QUESTIONS})
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def p0_accuracy(self) -> float | None:
        return _ratio(self.p0_correct, self.items)

    def metrics(self) -> dict[str, float | None]:
        """Flat names for thresholds: P0.precision, P2.exact, P3.bootstrapping.precision, ..."""
        out: dict[str, float | None] = {f"P0.{k}": v for k, v in _ratios(self.p0).items()}
        out["P0.accuracy"] = self.p0_accuracy
        out.update({f"P1.listed.{k}": v for k, v in _ratios(self.p1_listed).items()})
        for q, s in self.sets.items():
            out.update({f"{q}.{k}": v for k, v in _ratios(s.overall).items()})
            out[f"{q}.exact"] = s.exact_share
            if q in LABELLED:
                for label, c in s.labels.items():
                    out.update({f"{q}.{label}.{k}": v for k, v in _ratios(c).items()})
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"items": self.items, "computing": self.computing,
                "P0": {**self.p0.as_dict(), "accuracy": self.p0_accuracy, "items": self.items},
                "P1_listed": {**self.p1_listed.as_dict(), "items": self.sets["P1"].items},
                **{q: s.as_dict() for q, s in self.sets.items()}}


@dataclass(frozen=True)
class Pair:
    """One item: what a reviewer expects and what was proposed (label dicts as above)."""

    item: str
    expected: Mapping[str, Any]
    proposed: Mapping[str, Any]


def score_pairs(pairs: Iterable[Pair]) -> Scores:
    """Score every pair; the disagreements come in item order, P0 first."""
    scores = Scores()
    for pair in pairs:
        _score_one(scores, pair)
    return scores


def _score_one(scores: Scores, pair: Pair) -> None:
    exp, prop = pair.expected, pair.proposed
    scores.items += 1
    want, got = bool(exp["P0"]), bool(prop.get("P0"))
    scores.p0.add(frozenset({"P0"} if want else ()), frozenset({"P0"} if got else ()))
    scores.p0_correct += want == got
    if want != got:
        scores.disagreements.append(Disagreement(pair.item, "P0", want, got))
    if not want:
        return
    scores.computing += 1
    for q in SET_QUESTIONS:
        if q not in exp or exp[q] is None and q != "P1":
            continue
        e, p = normalized(q, exp[q]), normalized(q, prop.get(q))
        s = scores.sets[q]
        s.items += 1
        s.exact += e == p
        s.overall.add(e, p)
        if q in LABELLED:
            for label in e | p:
                s.labels.setdefault(label, Counts()).add(e & {label}, p & {label})
        if q == "P1":
            scores.p1_listed.add(frozenset({"P1"} if e else ()), frozenset({"P1"} if p else ()))
        if e != p:
            scores.disagreements.append(Disagreement(pair.item, q, sorted(e), sorted(p), sorted(e - p), sorted(p - e)))


# ------------------------------------------------------------------ per-rule precision

@dataclass
class RuleScore:
    """How often one rule's matches led to a right answer."""

    rule: str
    kind: str
    label: str
    matches: int = 0
    right: int = 0
    items: int = 0
    items_right: int = 0

    @property
    def precision(self) -> float | None:
        return _ratio(self.right, self.matches)

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "kind": self.kind, "label": self.label, "matches": self.matches,
                "right": self.right, "precision": self.precision, "items": self.items,
                "items_right": self.items_right}


def match_is_right(expected: Mapping[str, Any], kind: str, label: str, value: str) -> bool | None:
    """Whether one rule match supports a right answer; None when that answer is not scored.

    A flag match is right on an item that computes the metric. Any other match counts only
    on such items (elsewhere its answer is not scored) and is right when the label (for
    parameters and code links: the normalized value) is in the expected answer.
    """
    question = KIND_QUESTION.get(kind)
    if question is None:
        return None
    if question == "P0":
        return bool(expected["P0"])
    if not expected["P0"] or question not in expected or (expected[question] is None and question != "P1"):
        return None
    wanted = normalized(question, expected[question])
    key = label if question in LABELLED else NORMALIZE.get(question, str)(value)
    return key in wanted


def rule_precision(items: Iterable[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]]) -> list[RuleScore]:
    """Per-rule precision over (expected labels, matches) per item; a match is a dict with
    `rule`, `kind`, `label` and `match` (the value: capture group or URL)."""
    rules: dict[str, RuleScore] = {}
    for expected, matches in items:
        fired: dict[str, bool] = {}
        for m in matches:
            ok = match_is_right(expected, m["kind"], m["label"], m.get("match", ""))
            if ok is None:
                continue
            r = rules.setdefault(m["rule"], RuleScore(m["rule"], m["kind"], m["label"]))
            r.matches += 1
            r.right += ok
            fired[m["rule"]] = fired.get(m["rule"], False) or ok
        for rule, ok in fired.items():
            rules[rule].items += 1
            rules[rule].items_right += ok
    return sorted(rules.values(), key=lambda r: (r.precision if r.precision is not None else 2, r.rule))


# ------------------------------------------------------------------ thresholds

THRESHOLDS = Vocabulary(("P0", *SET_QUESTIONS), MEASURES, "P0.precision=0.97",
                        "P0.precision, P2.exact, P3.bootstrapping.precision")


def parse_threshold(spec: str) -> Threshold:
    """A papers score's `--min`, e.g. `P0.precision=0.97`."""
    return _parse_threshold(spec, THRESHOLDS)


def check_thresholds(metrics: Mapping[str, float | None], thresholds: Iterable[Threshold]) -> list[str]:
    return _check_thresholds(metrics, thresholds, THRESHOLDS)


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def _ratios(c: Counts) -> dict[str, float | None]:
    return {"precision": c.precision, "recall": c.recall, "f1": c.f1}
