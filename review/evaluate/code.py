"""`review evaluate code`: how right the code scan's answers are, measured on a code gold file.

Each gold repository's checkout is scanned exactly as `review code scan PATH` scans it
(`review.codebases.runner.scan_target`); `proposal_from_scan` turns the scan's JSON into
the three answers of CODE_LABELS.md, and the answers are scored as GOLD.md asks:

- `packages_used` (C1) and `packages_present`: sets of labels per repository, precision,
  recall and F1 micro-averaged over repositories, overall and per label, and the share of
  repositories whose set is exactly right;
- `eval_reproducible` (C2): agreement (the share of repositories where the proposal equals
  the human verdict; "unknown" never does) and binary precision/recall/F1 of "true", with
  the table of expected x proposed outcomes, unknown counted as an outcome of its own;
- every disagreement, with the repository, expected and proposed answers, the scan's
  evidence for the labels in question (or its C2 reasons) and the reviewer's note.

A gold line whose extra key `split` is "holdout" belongs to the holdout, every other line to
dev: the same scores are kept for each part as well as overall, because a scan tuned on the
development lines reads better there than on repositories nobody tuned it on (issue 32), and
only the holdout figure says how it will do on the next set.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from review.errors import ReviewError
from review.evaluate.thresholds import Threshold, Vocabulary
from review.evaluate.thresholds import check_thresholds as _check_thresholds
from review.evaluate.thresholds import parse_threshold as _parse_threshold
from review.evaluate.code_gold import SET_QUESTIONS, CodeGoldError, CodeGoldFile, GoldRepo

MANIFEST = ".gold-commits.json"
"""Written by gold/code/fetch.py next to the checkouts it makes: {"owner/name": commit}."""

UNKNOWN = "unknown"
SPLIT_KEY = "split"  # the extra gold key naming a line's part
DEV, HOLDOUT = "dev", "holdout"
MEASURES = ("precision", "recall", "f1", "exact", "agreement")
EVIDENCE_PER_LABEL = 3

Scanner = Callable[[Path], Mapping[str, Any]]
"""Scans one checkout and returns the scan's JSON object (what `review code scan PATH --json` prints)."""


# ------------------------------------------------------------------ the scan, in gold terms

@dataclass(frozen=True)
class Proposal:
    """The scan's answers for one repository, in the terms of the gold file."""

    packages_used: frozenset[str]
    packages_present: frozenset[str]
    eval_reproducible: bool | None  # None: unknown
    reason: str  # why that C2 verdict, in words a reviewer can check
    evidence: tuple[Mapping[str, Any], ...] = ()  # the scan's package evidence rows
    c2_evidence: tuple[Mapping[str, Any], ...] = ()  # what the C2 verdict rests on

    def answer(self, question: str) -> Any:
        return getattr(self, question)


def proposal_from_scan(scan: Mapping[str, Any]) -> Proposal:
    """Read the scan's JSON (`ScanReport.as_dict()`) as answers to C1, "present" and C2.

    The contract, so that the scores rise as soon as the scan learns the split of issue 12,
    with no change here:

    - `packages_used` and `packages_present` (lists of labels) are taken as they are when
      the scan reports them;
    - otherwise the scan's single list `packages` is read as `packages_used` and
      `packages_present` is empty: everything the scan sees is claimed to produce the scores
      (today's scan);
    - `eval_reproducible` is true or false; null, "unknown" or absent mean unknown (today's
      scan gives no C2 verdict, so every verdict is unknown);
    - `eval_reproducible_reason` (a string or a list of strings) says why; when absent the
      reason says that the scan gave none;
    - `evidence` rows are dicts with at least `package`; `file`, `line`, `text`, `source` and
      any further keys (a future `role` or `reason`) are shown as they are.
      `eval_reproducible_evidence` rows back the C2 verdict; when absent the scan's
      `anti_feature_evidence` is shown instead.
    """
    if "packages_used" in scan or "packages_present" in scan:
        used = _label_set(scan.get("packages_used"))
        present = _label_set(scan.get("packages_present"))
    else:
        used, present = _label_set(scan.get("packages")), frozenset()
    verdict = scan.get("eval_reproducible")
    if isinstance(verdict, str):
        verdict = {"true": True, "false": False}.get(verdict.strip().lower())
    if not isinstance(verdict, bool):
        verdict = None
    reason = scan.get("eval_reproducible_reason")
    if isinstance(reason, (list, tuple)):
        reason = "; ".join(str(r) for r in reason)
    if not reason:
        reason = "the scan gives no C2 verdict" if verdict is None else "the scan gives no reason"
    c2_rows = scan.get("eval_reproducible_evidence")
    if c2_rows is None:
        c2_rows = scan.get("anti_feature_evidence") or ()
    return Proposal(packages_used=used, packages_present=present, eval_reproducible=verdict, reason=str(reason),
                    evidence=tuple(r for r in scan.get("evidence") or () if isinstance(r, Mapping)),
                    c2_evidence=tuple(r for r in c2_rows if isinstance(r, Mapping)))


def _label_set(value: Any) -> frozenset[str]:
    return frozenset(str(v) for v in value or () if v)


# ------------------------------------------------------------------ scores

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

    def ratios(self) -> dict[str, float | None]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}

    def as_dict(self) -> dict[str, Any]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, **self.ratios()}


@dataclass
class SetScore:
    """One set-valued question (packages_used or packages_present) over the repositories."""

    question: str
    items: int = 0
    exact: int = 0
    overall: Counts = field(default_factory=Counts)
    labels: dict[str, Counts] = field(default_factory=dict)

    def add(self, expected: frozenset[str], proposed: frozenset[str]) -> None:
        self.items += 1
        self.exact += expected == proposed
        self.overall.add(expected, proposed)
        for label in expected | proposed:
            self.labels.setdefault(label, Counts()).add(expected & {label}, proposed & {label})

    @property
    def exact_share(self) -> float | None:
        return _ratio(self.exact, self.items)

    def as_dict(self) -> dict[str, Any]:
        return {"items": self.items, "exact": self.exact, "exact_share": self.exact_share, **self.overall.as_dict(),
                "labels": {k: v.as_dict() for k, v in sorted(self.labels.items())}}


@dataclass
class VerdictScore:
    """C2: the expected (true/false) x proposed (true/false/unknown) table and what follows from it."""

    table: Counter[tuple[bool, str]] = field(default_factory=Counter)

    def add(self, expected: bool, proposed: bool | None) -> None:
        self.table[(expected, _outcome(proposed))] += 1

    @property
    def items(self) -> int:
        return sum(self.table.values())

    @property
    def agreed(self) -> int:
        return self.table[(True, "true")] + self.table[(False, "false")]

    @property
    def unknown(self) -> int:
        return self.table[(True, UNKNOWN)] + self.table[(False, UNKNOWN)]

    @property
    def agreement(self) -> float | None:
        return _ratio(self.agreed, self.items)

    @property
    def counts(self) -> Counts:
        """"True" as the positive class: an unknown proposal for a true repository is a miss."""
        t = self.table
        return Counts(tp=t[(True, "true")], fp=t[(False, "true")], fn=t[(True, "false")] + t[(True, UNKNOWN)])

    def as_dict(self) -> dict[str, Any]:
        return {"items": self.items, "agreed": self.agreed, "agreement": self.agreement,
                "proposed_unknown": self.unknown, **self.counts.as_dict(),
                "table": {f"expected {str(e).lower()}": {p: self.table[(e, p)] for p in ("true", "false", UNKNOWN)}
                          for e in (True, False)}}


@dataclass
class Disagreement:
    """One repository and question where the proposal differs from the reviewer's answer."""

    repo: str
    line: int
    question: str
    expected: Any
    proposed: Any
    missing: list[str] = field(default_factory=list)  # expected, not proposed
    extra: list[str] = field(default_factory=list)  # proposed, not expected
    evidence: list[dict[str, Any]] = field(default_factory=list)  # what the proposal rests on
    note: str | None = None  # the reviewer's note for the repository
    part: str = DEV  # dev or holdout

    def as_dict(self) -> dict[str, Any]:
        return {"repo": self.repo, "line": self.line, "part": self.part, "question": self.question,
                "expected": self.expected, "proposed": self.proposed, "missing": self.missing, "extra": self.extra,
                "evidence": self.evidence, "note": self.note}


@dataclass
class RepoResult:
    """One gold repository: where it was scanned, what the scan proposed, how long it took."""

    repo: str
    line: int
    checkout: str
    commit_check: str  # verified | unverified | (never a mismatch: that is an error)
    expected: dict[str, Any]
    proposal: Proposal
    seconds: float
    failed: str | None = None  # why the scan failed, when it did

    def as_dict(self) -> dict[str, Any]:
        p = self.proposal
        return {"repo": self.repo, "line": self.line, "checkout": self.checkout, "commit_check": self.commit_check,
                "expected": {k: sorted(v) if isinstance(v, frozenset) else v for k, v in self.expected.items()},
                "proposed": {"packages_used": sorted(p.packages_used), "packages_present": sorted(p.packages_present),
                             "eval_reproducible": _outcome(p.eval_reproducible), "reason": p.reason},
                "seconds": round(self.seconds, 3), "failed": self.failed}


def part_of(entry: GoldRepo) -> str:
    """`holdout` when the gold line says `"split": "holdout"`, else `dev` (no split key is dev)."""
    value = entry.extra.get(SPLIT_KEY)
    return HOLDOUT if isinstance(value, str) and value.strip().lower() == HOLDOUT else DEV


@dataclass
class PartScore:
    """The scores of one part of the gold file (dev or holdout), as the overall ones are kept."""

    name: str
    repositories: int = 0
    sets: dict[str, SetScore] = field(default_factory=lambda: {q: SetScore(q) for q in SET_QUESTIONS})
    verdict: VerdictScore = field(default_factory=VerdictScore)

    def as_dict(self) -> dict[str, Any]:
        return {"repositories": self.repositories, **{q: s.as_dict() for q, s in self.sets.items()},
                "eval_reproducible": self.verdict.as_dict()}


@dataclass
class CodeEvaluation:
    """Every score GOLD.md lists for code, the disagreements behind them, and each repository's result."""

    gold: str
    sets: dict[str, SetScore] = field(default_factory=lambda: {q: SetScore(q) for q in SET_QUESTIONS})
    verdict: VerdictScore = field(default_factory=VerdictScore)
    results: list[RepoResult] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)
    signature: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    parts: dict[str, PartScore] = field(default_factory=lambda: {p: PartScore(p) for p in (DEV, HOLDOUT)})

    @property
    def repositories(self) -> int:
        return len(self.results)

    @property
    def failed(self) -> list[RepoResult]:
        return [r for r in self.results if r.failed]

    def metrics(self) -> dict[str, float | None]:
        """Flat names for --min: packages_used.exact, packages_present.BZ/pyrouge.recall, eval_reproducible.agreement, ..."""
        out: dict[str, float | None] = {}
        for q, s in self.sets.items():
            out.update({f"{q}.{k}": v for k, v in s.overall.ratios().items()})
            out[f"{q}.exact"] = s.exact_share
            for label, c in s.labels.items():
                out.update({f"{q}.{label}.{k}": v for k, v in c.ratios().items()})
        out.update({f"eval_reproducible.{k}": v for k, v in self.verdict.counts.ratios().items()})
        out["eval_reproducible.agreement"] = self.verdict.agreement
        return out

    @property
    def has_holdout(self) -> bool:
        return self.parts[HOLDOUT].repositories > 0

    def as_dict(self) -> dict[str, Any]:
        return {"gold": self.gold, "repositories": self.repositories, "scan_failed": len(self.failed),
                "seconds": round(self.seconds, 3), "signature": self.signature,
                **{q: s.as_dict() for q, s in self.sets.items()}, "eval_reproducible": self.verdict.as_dict(),
                "parts": {k: v.as_dict() for k, v in self.parts.items()},
                "disagreements": [d.as_dict() for d in self.disagreements],
                "results": [r.as_dict() for r in self.results]}


# ------------------------------------------------------------------ checkouts

def locate_checkouts(gold: CodeGoldFile, root: Path | None) -> dict[str, tuple[Path, str]]:
    """Each gold repository's checkout and whether its commit was verified, before any scan.

    A checkout is the line's `path`, else `root/owner+name`. A missing checkout, or one whose
    commit differs from the labelled commit (read from its .git, or from the MANIFEST that
    gold/code/fetch.py writes next to its checkouts), is an error naming the gold line.
    """
    manifests: dict[Path, dict[str, str]] = {}
    out: dict[str, tuple[Path, str]] = {}
    for entry in gold.repos:
        where = f"{gold.path}:{entry.line}"
        if entry.path is not None:
            folder = entry.path
        elif root is not None:
            folder = root / entry.folder_name
        else:
            raise CodeGoldError(f"{entry.repo}: the line has no 'path' and no --root was given", item=where,
                                hint="pass --root FOLDER holding one owner+name checkout per repository")
        if not folder.is_dir():
            raise CodeGoldError(f"{entry.repo}: checkout not found at {folder}", item=where,
                                hint="fetch the checkouts first, e.g. python gold/code/fetch.py --out FOLDER")
        actual = _checkout_commit(folder, entry, manifests)
        if actual is not None and actual != entry.commit:
            raise CodeGoldError(f"{entry.repo}: the checkout at {folder} is at commit {actual[:12]}, "
                                f"the labels describe {entry.commit[:12]}", item=where,
                                hint="check the repository out at the labelled commit (gold/code/fetch.py does)")
        out[entry.repo] = (folder, "verified" if actual else "unverified")
    return out


def _checkout_commit(folder: Path, entry: GoldRepo, manifests: dict[Path, dict[str, str]]) -> str | None:
    if (folder / ".git").exists():
        try:
            proc = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True,
                                  timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        head = proc.stdout.strip().lower()
        return head if proc.returncode == 0 and len(head) == 40 else None
    parent = folder.parent
    if parent not in manifests:
        try:
            manifests[parent] = {k.lower(): str(v).lower() for k, v in
                                 json.loads((parent / MANIFEST).read_text(encoding="utf-8")).items()}
        except (OSError, ValueError, AttributeError):
            manifests[parent] = {}
    return manifests[parent].get(entry.repo.lower())


# ------------------------------------------------------------------ evaluation

def evaluate(gold: CodeGoldFile, checkouts: Mapping[str, tuple[Path, str]], scan: Scanner, *,
             signature: Mapping[str, Any] | None = None,
             progress: Callable[[GoldRepo], None] | None = None) -> CodeEvaluation:
    """Scan every gold repository's checkout and score the proposals; a scan failure is kept and reported."""
    result = CodeEvaluation(gold=str(gold.path), signature=dict(signature or {}))
    started = time.perf_counter()
    for entry in gold.repos:
        folder, commit_check = checkouts[entry.repo]
        t0 = time.perf_counter()
        failed = None
        try:
            raw = scan(folder)
            proposal = proposal_from_scan(raw)
            if not result.signature and isinstance(raw.get("signature"), Mapping):
                result.signature = dict(raw["signature"])  # the scanner's own: name, version, catalog sha
        except ReviewError as exc:
            failed = str(exc)
            proposal = Proposal(frozenset(), frozenset(), None, f"the scan failed: {exc}")
        result.results.append(RepoResult(entry.repo, entry.line, str(folder), commit_check, dict(entry.answers),
                                         proposal, time.perf_counter() - t0, failed))
        _score(result, entry, proposal)
        if progress is not None:
            progress(entry)
    result.seconds = time.perf_counter() - started
    return result


def score(gold: CodeGoldFile, proposals: Mapping[str, Proposal]) -> CodeEvaluation:
    """Score ready-made proposals (one per gold repository), no scanning: for tests and other proposers."""
    result = CodeEvaluation(gold=str(gold.path))
    for entry in gold.repos:
        _score(result, entry, proposals[entry.repo])
    return result


def _score(result: CodeEvaluation, entry: GoldRepo, proposal: Proposal) -> None:
    part_name = part_of(entry)
    part = result.parts[part_name]
    part.repositories += 1
    for q in SET_QUESTIONS:
        if q not in entry.answers:
            continue
        expected, proposed = entry.answers[q], proposal.answer(q)
        result.sets[q].add(expected, proposed)
        part.sets[q].add(expected, proposed)
        if expected != proposed:
            missing, extra = sorted(expected - proposed), sorted(proposed - expected)
            result.disagreements.append(Disagreement(
                entry.repo, entry.line, q, sorted(expected), sorted(proposed), missing, extra,
                _evidence_for(proposal, missing + extra), entry.note, part_name))
    if "eval_reproducible" in entry.answers:
        expected_c2 = entry.answers["eval_reproducible"]
        result.verdict.add(expected_c2, proposal.eval_reproducible)
        part.verdict.add(expected_c2, proposal.eval_reproducible)
        if proposal.eval_reproducible is not expected_c2:
            evidence = [{"reason": proposal.reason}] + [dict(r) for r in proposal.c2_evidence[:2 * EVIDENCE_PER_LABEL]]
            result.disagreements.append(Disagreement(
                entry.repo, entry.line, "eval_reproducible", expected_c2, _outcome(proposal.eval_reproducible),
                evidence=evidence, note=entry.note, part=part_name))


def _evidence_for(proposal: Proposal, labels: Iterable[str]) -> list[dict[str, Any]]:
    """The scan's evidence rows for these labels, a few per label, in the scan's order."""
    out: list[dict[str, Any]] = []
    for label in labels:
        rows = [dict(r) for r in proposal.evidence if r.get("package") == label]
        out.extend(rows[:EVIDENCE_PER_LABEL])
    return out


def _outcome(verdict: bool | None) -> str:
    return UNKNOWN if verdict is None else str(verdict).lower()


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


# ------------------------------------------------------------------ thresholds

THRESHOLDS = Vocabulary((*SET_QUESTIONS, "eval_reproducible"), MEASURES, "packages_used.exact=0.9",
                        "packages_used.exact, packages_present.f1, eval_reproducible.agreement")


def parse_threshold(spec: str) -> Threshold:
    """A code score's `--min`, e.g. `packages_present.BZ/pyrouge.recall=0.8`."""
    return _parse_threshold(spec, THRESHOLDS)


def check_thresholds(metrics: Mapping[str, float | None], thresholds: Iterable[Threshold]) -> list[str]:
    return _check_thresholds(metrics, thresholds, THRESHOLDS)


# ------------------------------------------------------------------ wiring to the settings

def vocabulary(settings: Any, code_catalog: Any) -> frozenset[str]:
    """Every label a code gold file may use: the code catalog's and the paper catalog's (§5)."""
    from review.compute import load_catalog as load_paper_catalog

    return frozenset(code_catalog.labels) | frozenset(load_paper_catalog(settings.compute.packages, settings).packages)


def scanner(settings: Any, code_catalog: Any) -> Scanner:
    """The scan of `review code scan PATH`, with the settings' catalog and limits."""
    from review.codebases.runner import scan_target

    def scan(folder: Path) -> Mapping[str, Any]:
        return scan_target(settings, str(folder), catalog=code_catalog).as_dict()

    return scan


def run(settings: Any, gold_path: str | Path, root: str | Path | None) -> CodeEvaluation:
    """Read the gold file, locate and check every checkout, then scan and score (the whole command)."""
    from review.codebases.catalog import load_catalog
    from review.evaluate.code_gold import read_code_gold
    from review.progress import progress

    catalog = load_catalog(settings.code.catalog or None, settings)
    gold = read_code_gold(gold_path, vocabulary(settings, catalog))
    checkouts = locate_checkouts(gold, Path(root).expanduser().resolve() if root else None)
    with progress(len(gold.repos), "scanning gold checkouts") as bar:
        return evaluate(gold, checkouts, scanner(settings, catalog), progress=lambda entry: bar.advance())
