"""Figure 1 from a human sample: automated only, human only, and prediction-powered.

Every paper is computed twice with compute's own code: with the resolved human answers
(the truth where reviewers settled the questions) and with none (the rules alone). The
human sample is the recorded design's drawn papers whose questions a statistic rests on
are all answered by people (`stats.SHARE_QUESTIONS`; the automated "no code" of a paper
without a linked codebase is nobody's C0 answer). Papers outside the recorded frame, and a
frame item since removed from the corpus, are reported, not estimated.

A sample is used only when it is known random: a design must exist, be random (not cut in
a non-random order), and the statistic needs `design.minimum` reviewed papers in all and
`design.MIN_PER_STRATUM` in each stratum, a paper counting as reviewed for a statistic only
when people answered every question it rests on (`design.human_answered`). Anything else
gives no estimate and a reason, never a silent fallback. `review plan` asks the same module.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from review.compute.catalog import Catalog
from review.compute.labels import PaperInput, compute_paper
from review.compute.stage import configured_rules, gather_inputs
from review.db.models import SamplingDesign
from review.db.session import Database
from review.errors import ConfigError
from review.estimate import design as designs
from review.estimate.ppi import Interval, Stratum, automated_ratio, classical_ratio, ppi_ratio
from review.export.stats import SHARE_QUESTIONS, share_tests
from review.metric import Metric
from review.settings import Settings


@dataclass
class Estimate:
    """One statistic three ways, and the rules' errors measured on the sample."""

    name: str
    method: str = ""  # ppi | ppi-stratified; empty when refused
    estimate: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n_human: int = 0
    human: float | None = None
    human_low: float | None = None
    human_high: float | None = None
    automated: float | None = None
    rule_false_positive: float | None = None  # P(rules say yes | humans say no), on the sample
    rule_false_negative: float | None = None  # P(rules say no | humans say yes), on the sample
    note: str = ""

    def columns(self) -> dict[str, Any]:
        r = lambda x: None if x is None else round(float(x), 6)  # noqa: E731
        return {"method": self.method, "estimate": r(self.estimate), "estimate_low": r(self.ci_low),
                "estimate_high": r(self.ci_high), "n_human": self.n_human, "human_only": r(self.human),
                "human_only_low": r(self.human_low), "human_only_high": r(self.human_high),
                "automated_only": r(self.automated), "rule_false_positive": r(self.rule_false_positive),
                "rule_false_negative": r(self.rule_false_negative), "estimate_note": self.note}


@dataclass
class SampleEstimates:
    design_id: int | None = None
    design: str = ""  # e.g. "sample of 300 papers from a frame of 2,834, seed 7"
    n_sample: int = 0
    n_frame: int = 0
    confidence: float = 0.95
    estimates: dict[str, Estimate] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # why a sample is not used, or what to know
    undesigned: list[str] = field(default_factory=list)  # samples queued without a recorded design

    @property
    def usable(self) -> bool:
        return any(e.method for e in self.estimates.values())

    @property
    def refusal(self) -> str:
        """Why no statistic got an estimate from the recorded sample ("" when it was estimated):
        written into statistics.csv, not only logged."""
        if self.estimates:
            return ""
        return "; ".join(self.problems) or "the recorded sample gives no estimate"


def as_record(row: dict[str, Any]) -> dict[str, Any]:
    """A computed row in the dataset's vocabulary, so Figure 1's tests apply to it."""
    return {**row, "paper_protocol": row["protocol"],
            "software_error": {"true": True, "false": False}.get(row["software_error"] or "")}


def automated_only(inp: PaperInput) -> PaperInput:
    return replace(inp, human={}, disputed=set(),
                   codes=[replace(c, human={}, disputed=set()) for c in inp.codes])


def rows_both_ways(session: Session, settings: Settings, catalog: Catalog) -> dict[int, tuple[dict, dict]]:
    """paper id -> (row with human answers, row from the rules alone). Resolutions are
    refreshed inside the caller's session; roll it back to leave the database unchanged.
    The labels read are those of the rule set the stored rows were computed from (when
    they share one), so an estimate and the exported rows rest on the same rules."""
    from review.provenance import rule_set_of_rows

    compute = settings.compute
    used = rule_set_of_rows(session)
    if used is not None:
        compute = compute.model_copy(update={"rule_set": used.sha256})
    inputs, _ = gather_inputs(session, compute, configured_rules(settings))
    return {inp.paper_id: (as_record(compute_paper(inp, catalog, settings.compute)),
                           as_record(compute_paper(automated_only(inp), catalog, settings.compute)))
            for inp in inputs}


settled = designs.human_answered  # whether people answered every question a statistic rests on


def describe(d: SamplingDesign) -> str:
    what = "papers" if d.kind == "papers" else "codebases"
    if d.method == "stratified":
        return (f"stratified sample ({d.requested} per {d.strata_by}, {len(d.strata)} strata) of {len(d.items)} "
                f"{what} from a frame of {len(d.frame):,}, seed {d.seed} (design {d.id})")
    return (f"simple random sample of {len(d.items)} {what} from a frame of {len(d.frame):,}, seed {d.seed} "
            f"(design {d.id})")


def _check_design(d: SamplingDesign | None) -> list[str]:
    problems = []
    if d is None:
        problems.append("no sampling design recorded: queue a sample with `review queue papers --select sample --n N"
                        " --seed S` (or `review plan --queue`) to get prediction-powered estimates")
    elif not d.random:
        problems.append(f"design {d.id} is not a random sample ({d.reason}): no estimate rests on it")
    return problems


@dataclass
class Loaded:
    """A design's sample and frame with every paper's rows (human, rules alone)."""

    out: SampleEstimates
    frame: list[tuple[int, Any]] = field(default_factory=list)
    items: set[int] = field(default_factory=set)
    rows: dict[int, tuple[dict, dict]] = field(default_factory=dict)
    stratified: bool = False

    @property
    def usable(self) -> bool:
        return bool(self.frame)


def load(db: Database, settings: Settings, catalog: Catalog, metric: Metric, *, design_id: int | None = None,
         confidence: float | None = None, always_rows: bool = False) -> Loaded:
    """The newest recorded paper sample (or `design_id`) ready to estimate; the rows are
    read only when there is a random design (or `always_rows`: planning without one)."""
    level = confidence or settings.export.confidence
    with db.session() as s:
        d = designs.latest(s, "papers", design_id)
        if design_id is not None and d is None:
            raise ConfigError(f"no sampling design {design_id}", item="--design",
                              hint="designs are recorded by `review queue --select sample|stratified`")
        if d is not None and d.kind != "papers":
            problem = (f"design {d.id} samples {d.kind}: the Figure 1 statistics are per paper, so sample papers "
                       "(their codebases are reviewed with them)")
            return Loaded(SampleEstimates(confidence=level, problems=[problem], design_id=d.id, design=describe(d)))
        loaded = Loaded(SampleEstimates(confidence=level, problems=_check_design(d),
                                        undesigned=[f"{u}: its papers are not treated as a random sample"
                                                    for u in designs.undesigned_samples(s)]))
        if d is not None:
            out = loaded.out
            out.design_id, out.design, out.n_sample, out.n_frame = d.id, describe(d), len(d.items), len(d.frame)
        if (d is None or not d.random) and not always_rows:
            return loaded
        loaded.rows = rows_both_ways(s, settings, catalog)
        s.rollback()
        if d is None or not d.random:
            return loaded
        loaded.frame, loaded.items, loaded.stratified = list(d.frame), set(d.items), d.method == "stratified"
        order = d.queue_order
    if not _complete_enough(loaded, order):
        loaded.frame = []
        return loaded
    rows, out = loaded.rows, loaded.out
    gone = [pid for pid, _ in loaded.frame if pid not in rows]
    if gone:
        out.problems.append(f"{len(gone)} paper(s) of the frame are no longer in the corpus: left out")
    loaded.frame = [(pid, st) for pid, st in loaded.frame if pid in rows]
    in_frame = {pid for pid, _ in loaded.frame}
    outside = sum(1 for pid, (_, auto) in rows.items() if pid not in in_frame and auto["paper_metric"] is True)
    if outside:
        out.problems.append(f"{outside} paper(s) the rules say compute {metric.name} are outside the sampling frame: "
                            "the estimates cover the frame only")
    return loaded


def _complete_enough(loaded: Loaded, order: str | None) -> bool:
    """A partly reviewed sample is random only if reviewers met its papers in random order."""
    out = loaded.out
    reviewed = sum(1 for p in loaded.items if p in loaded.rows and loaded.rows[p][0]["sources"].get("P0") == "human")
    if reviewed >= len(loaded.items):
        return True
    where = f"design {out.design_id}: {reviewed} of {len(loaded.items)} sampled papers reviewed so far"
    if order != "random":
        out.problems.append(f"{where}, queued in {order or 'an unknown'} order: the reviewed part is not a random "
                            "sample; finish the sample, or queue it with --order random")
        return False
    out.problems.append(f"{where} (queued in random order: the reviewed part is a smaller random sample)")
    return True


def estimate_figure1(db: Database, settings: Settings, catalog: Catalog, metric: Metric, *,
                     design_id: int | None = None, confidence: float | None = None) -> SampleEstimates:
    """Each Figure 1 share estimated from the newest recorded paper sample (or `design_id`)."""
    loaded = load(db, settings, catalog, metric, design_id=design_id, confidence=confidence)
    out = loaded.out
    if not loaded.usable:
        return out
    for key, (test, among) in share_tests(settings.compute).items():
        name = metric.stat_name(key)
        out.estimates[name] = _one(name, loaded.frame, loaded.items, loaded.rows, test, among, SHARE_QUESTIONS[key],
                                   loaded.stratified, out.confidence)
    return out


def indicators(rows: list[dict[str, Any]], test: Any, among: Any) -> tuple[np.ndarray, np.ndarray]:
    d = np.array([r["paper_metric"] is True and among(r) for r in rows], dtype=float)
    y = np.array([test(r) for r in rows], dtype=float) * d
    return y, d


def unanswered_note(frame: list[tuple[int, Any]], items: set[int], rows: dict[int, tuple[dict, dict]],
                    questions: tuple[str, ...]) -> str:
    """Which of the statistic's questions people left unanswered on the sampled papers, e.g.
    "no person answered C0 for 40 of 40 sampled papers": such papers are not human-verified."""
    sampled = [pid for pid, _ in frame if pid in items]
    missing: dict[str, int] = {}
    for pid in sampled:
        for q in designs.unanswered(rows[pid][0], questions):
            missing[q] = missing.get(q, 0) + 1
    if not missing:
        return ""
    each = ", ".join(f"{q} for {n} of {len(sampled)}" for q, n in sorted(missing.items()))
    return f"no person answered {each} sampled papers (automated answers are not human-verified)"


def sample_strata(frame: list[tuple[int, Any]], items: set[int], rows: dict[int, tuple[dict, dict]], test: Any,
                  among: Any, questions: tuple[str, ...], stratified: bool) -> tuple[list[Stratum], str]:
    """The statistic's strata (human sample + frame), or none and the reason."""
    groups: dict[str, list[int]] = {}
    for pid, stratum in frame:
        groups.setdefault(str(stratum) if stratified else "all", []).append(pid)
    strata = []
    for key, pids in sorted(groups.items()):
        labelled = [p for p in pids if p in items and settled(rows[p][0], questions)]
        if len(labelled) < designs.MIN_PER_STRATUM:
            why = (f"stratum {key}: {len(labelled)} reviewed paper(s), at least {designs.MIN_PER_STRATUM} needed "
                   "for its variance")
            missing = unanswered_note(frame, items, rows, questions)
            return [], f"{why}; {missing}" if missing else why
        y, d = indicators([rows[p][0] for p in labelled], test, among)
        yhat, dhat = indicators([rows[p][1] for p in labelled], test, among)
        yhat_all, dhat_all = indicators([rows[p][1] for p in pids], test, among)
        strata.append(Stratum(y, yhat, yhat_all, d, dhat, dhat_all))
    return strata, ""


def _one(name: str, frame: list[tuple[int, Any]], items: set[int], rows: dict[int, tuple[dict, dict]],
         test: Any, among: Any, questions: tuple[str, ...], stratified: bool, level: float) -> Estimate:
    est = Estimate(name)
    est.n_human = sum(1 for pid, _ in frame if pid in items and settled(rows[pid][0], questions))
    strata, est.note = sample_strata(frame, items, rows, test, among, questions, stratified)
    if not strata:
        return est
    est.automated = _value(automated_ratio(strata, level))[0]
    truth = np.concatenate([s.parts()[0] for s in strata]).astype(bool)
    guess = np.concatenate([s.parts()[1] for s in strata]).astype(bool)
    if (~truth).any():
        est.rule_false_positive = float((guess & ~truth).sum() / (~truth).sum())
    if truth.any():
        est.rule_false_negative = float((~guess & truth).sum() / truth.sum())
    short = designs.shortfall(est.n_human, len(frame))
    if short:
        missing = unanswered_note(frame, items, rows, questions)
        est.note = f"{short}; {missing}" if missing else short
        return est
    if sum(float(s.parts()[3].sum()) for s in strata) == 0:
        est.note = "no reviewed paper is in this statistic's denominator"
        return est
    est.method = "ppi-stratified" if stratified else "ppi"
    est.estimate, est.ci_low, est.ci_high = _value(ppi_ratio(strata, level))
    est.human, est.human_low, est.human_high = _value(classical_ratio(strata, level))
    return est


def _value(i: Interval) -> tuple[float | None, float | None, float | None]:
    vals = [float(np.asarray(x)) for x in (i.estimate, i.low, i.high)]
    if any(np.isnan(v) for v in vals):
        return None, None, None
    return vals[0], max(0.0, vals[1]), min(1.0, vals[2])
