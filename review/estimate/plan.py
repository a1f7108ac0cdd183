"""How many papers to review for a target interval half-width.

The prediction-powered interval of a share theta = E[d*y] / E[d] has half-width
z * sqrt(V_r / n + V_u / N) / E[d], with V_r the variance of the rules' error on the
linearized answer g = d*(y - theta) (measured on the human sample: g - ghat) and V_u the
variance of the rules' own answers over the frame of N papers. Solving for n gives the
sample to review; the human-only interval needs z^2 Var(g) / (h E[d])^2 papers instead.

Without a human sample the rules' error comes from stated priors: a miss rate (the rules
say no where reviewers would say yes) and an invention rate, both among the papers of the
statistic's denominator, applied to the share the rules report; the denominator's own
errors are then left out (stated in the output).
Codebases to review are those of the drawn papers, estimated by the frame's average.
No plan asks for fewer papers than the estimator needs (`review.estimate.design.minimum`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select

from review.compute.catalog import Catalog
from review.db.session import Database
from review.errors import ConfigError
from review.estimate import design as designs
from review.estimate.figure1 import Loaded, indicators, load, sample_strata
from review.estimate.ppi import Stratum, ppi_ratio, z_value
from review.export.stats import SHARE_QUESTIONS, share_tests
from review.metric import Metric
from review.settings import Settings


@dataclass(frozen=True)
class Priors:
    miss: float = 0.2  # P(rules say no | the answer is yes)
    invent: float = 0.05  # P(rules say yes | the answer is no)


@dataclass
class Need:
    statistic: str
    half_width: float
    source: str  # "measured on design N (n reviewed)" | "priors: miss 0.20, invent 0.05"
    papers: int  # to review, prediction-powered
    papers_human_only: int
    codebases: int  # expected among those papers
    reachable: bool = True
    share: float | None = None
    rule_false_positive: float | None = None
    rule_false_negative: float | None = None
    note: str = ""


@dataclass
class Plan:
    frame: int = 0
    confidence: float = 0.95
    needs: list[Need] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    queued: dict[str, Any] = field(default_factory=dict)

    @property
    def papers(self) -> int:
        return max((n.papers for n in self.needs), default=0)

    @property
    def codebases(self) -> int:
        return max((n.codebases for n in self.needs), default=0)

    def as_dict(self) -> dict[str, Any]:
        return {"frame": self.frame, "confidence": self.confidence, "papers": self.papers,
                "codebases": self.codebases, "needs": [asdict(n) for n in self.needs], "problems": self.problems,
                "queued": self.queued}

    def summary(self) -> str:
        targets = ", ".join(f"{n.statistic} ±{n.half_width:g}" for n in self.needs)
        text = (f"plan: review {self.papers:,} of {self.frame:,} papers (about {self.codebases:,} codebases) for "
                f"{targets} at {self.confidence:.0%}, prediction-powered")
        if self.queued:
            text += f"; queued design {self.queued.get('design')}"
        return text


def parse_targets(targets: list[str], metric: Metric) -> list[tuple[str, str, float]]:
    """`reproducible=0.02` -> (internal key, statistic name, half-width)."""
    names = {metric.stat_name(k): k for k in SHARE_QUESTIONS}
    out = []
    for t in targets:
        name, sep, value = t.partition("=")
        try:
            width = float(value)
        except ValueError:
            width = -1.0
        if not sep or name.strip() not in names or not 0 < width < 0.5:
            raise ConfigError(f"bad --target {t!r}", item="--target",
                              hint=f"STAT=HALF_WIDTH with a half-width in (0, 0.5), STAT one of {', '.join(names)}")
        out.append((names[name.strip()], name.strip(), width))
    return out


def _solve(v_r: float, v_u: float, var_g: float, den: float, big_n: int, h: float, z: float) -> tuple[int, int, bool]:
    """(papers for PPI, papers for human only, reachable): the smallest n with z*se <= h."""
    budget = (h * den / z) ** 2 - v_u / big_n
    human = math.ceil(var_g / (h * den / z) ** 2) if den > 0 else big_n
    if budget <= 0:
        return big_n, min(human, big_n), False
    return min(math.ceil(v_r / budget), big_n), min(human, big_n), True


def _measured(strata: list[Stratum], confidence: float) -> tuple[float, float, float, float, float]:
    """(theta, V_r, V_u, Var(g), E[d]) from a human sample, pooled over strata."""
    theta = float(ppi_ratio(strata, confidence).estimate)
    parts = [s.parts() for s in strata]
    cat = lambda i: np.concatenate([p[i] for p in parts])  # noqa: E731
    a, ahat, ahat_all, d, dhat, dhat_all = (cat(i) for i in range(6))
    g, ghat, ghat_all = a - theta * d, ahat - theta * dhat, ahat_all - theta * dhat_all
    den = float(dhat_all.mean() + (d - dhat).mean())
    return theta, float((g - ghat).var()), float(ghat_all.var()), float(g.var()), den


def _prior(ahat_all: np.ndarray, dhat_all: np.ndarray, priors: Priors) -> tuple[float, float, float, float, float]:
    """The same from the rules' answers and stated error rates, both among the papers of the
    statistic's denominator (taken as right)."""
    den = float(dhat_all.mean())
    within = float(ahat_all.mean()) / den if den else 0.0  # the share the rules report
    span = 1 - priors.miss - priors.invent
    theta = min(max((within - priors.invent) / span, 0.0), 1.0) if span > 0 else within  # the true share
    up, down = den * theta * priors.miss, den * (1 - theta) * priors.invent  # truth yes & rules no, and back
    v_r = up + down - (up - down) ** 2
    g_all = ahat_all - theta * dhat_all
    var_g = den * theta * (1 - theta)  # g = d*(y - theta): mean 0
    return theta, v_r, float(g_all.var()), var_g, den


def plan(db: Database, settings: Settings, catalog: Catalog, metric: Metric, targets: list[str], *,
         priors: Priors | None = None, design_id: int | None = None, confidence: float | None = None) -> Plan:
    """Papers (and codebases) to review for each target; see the module docstring."""
    wanted = parse_targets(targets, metric)
    loaded = load(db, settings, catalog, metric, design_id=design_id, confidence=confidence, always_rows=True)
    out = Plan(confidence=loaded.out.confidence, problems=loaded.out.undesigned + loaded.out.problems)
    frame = loaded.frame or [(pid, None) for pid, (_, auto) in loaded.rows.items()
                             if auto["paper_metric_prelim"] is True]
    out.frame = len(frame)
    if not frame:
        raise ConfigError("no papers to plan for: the frame (papers found by the preliminary search) is empty",
                          hint="run `review label` first")
    per_paper = float(np.mean([len(loaded.rows[p][1]["code_urls"]) for p, _ in frame]))
    z = z_value(out.confidence)
    tests = share_tests(settings.compute)
    for key, name, h in wanted:
        test, among = tests[key]
        out.needs.append(_need(loaded, frame, key, name, h, test, among, priors or Priors(), z, per_paper))
    return out


def _need(loaded: Loaded, frame: list[tuple[int, Any]], key: str, name: str, h: float, test: Any, among: Any,
          priors: Priors, z: float, per_paper: float) -> Need:
    strata, why = ([], "no random sample") if not loaded.usable else sample_strata(
        frame, loaded.items, loaded.rows, test, among, SHARE_QUESTIONS[key], loaded.stratified)
    n_human = sum(s.n for s in strata)
    short = designs.shortfall(n_human, len(frame))
    if strata and not short:
        theta, v_r, v_u, var_g, den = _measured(strata, loaded.out.confidence)
        truth = np.concatenate([s.parts()[0] for s in strata]).astype(bool)
        guess = np.concatenate([s.parts()[1] for s in strata]).astype(bool)
        source = f"measured on design {loaded.out.design_id} ({n_human} reviewed papers)"
        fp = float((guess & ~truth).sum() / max((~truth).sum(), 1))
        fn = float((~guess & truth).sum() / max(truth.sum(), 1))
        note = ""
    else:
        ahat_all, dhat_all = indicators([loaded.rows[p][1] for p, _ in frame], test, among)
        theta, v_r, v_u, var_g, den = _prior(ahat_all, dhat_all, priors)
        source = f"priors: miss {priors.miss:.2f}, invent {priors.invent:.2f}"
        fp, fn = priors.invent, priors.miss
        note = (f"{why or short}: stated priors used; the denominator's own errors are not in them")
    solved, solved_human, reachable = _solve(v_r, v_u, var_g, den, len(frame), h, z)
    # never fewer than the estimator needs: answering all of them gives the estimate
    papers, human = designs.planned_size(solved, len(frame)), designs.planned_size(solved_human, len(frame))
    if papers > solved:
        note = (note + "; " if note else "") + (f"the interval needs {solved}, the estimator at least "
                                                f"{designs.minimum(len(frame))} reviewed papers")
    if not reachable:
        note = (note + "; " if note else "") + ("no sample reaches the target on this frame (the rules' own "
                                                "variance over it is wider): review every paper, which has no "
                                                "sampling error")
    return Need(name, h, source, papers, human, int(round(papers * per_paper)), reachable, round(theta, 6),
                round(fp, 6), round(fn, 6), note)


def queue_plan(db: Database, settings: Settings, planned: Plan, *, seed: int = 0,
               offline: Path | None = None) -> None:
    """Queue the planned simple random sample of papers (its design recorded) and the
    codebases of the drawn papers; `offline` writes task files instead (FILE, FILE-code)."""
    from review.db.models import Codebase, SamplingDesign
    from review.labelstudio.queue import run_queue

    if planned.papers < 1:
        raise ConfigError("the plan needs no papers: nothing to queue")
    papers = run_queue(db, settings, "papers", select_="sample", n=planned.papers, seed=seed, order_="random",
                       offline=offline)
    with db.session() as s:
        design = s.get(SamplingDesign, papers.design) if papers.design else None
        drawn = set(design.items) if design else set()
        code_ids = {cid for (cid,) in s.execute(select(Codebase.id).where(Codebase.paper_id.in_(drawn)))}
    code_file = offline.with_name(offline.stem + "-code" + offline.suffix) if offline else None
    code = run_queue(db, settings, "code", select_="all", order_="random", seed=seed, offline=code_file,
                     only=code_ids) if code_ids else None
    planned.queued = {"design": papers.design, "papers": papers.selected, "codebases": code.selected if code else 0,
                      "papers_target": papers.offline_file or papers.project,
                      "codebases_target": (code.offline_file or code.project) if code else None}
