"""Corpora with known truth, to check the estimators: rules that err at known rates, and a
human sample drawn the way `review queue --select sample|stratified` draws it.

Every replication is a fresh corpus (truth and rule answers drawn anew) with a fresh
sample; all replications are one array each (rows = replications), so hundreds of them
run in well under a second. The truth an interval must cover is the corpus's own share
(what a complete human pass would find), not the rate it was drawn with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from review.estimate.ppi import Interval, Stratum, automated_ratio, classical_ratio, ppi_ratio


@dataclass(frozen=True)
class Rules:
    """A statistic in a corpus: its true rate, and how often the rules miss (false
    negatives) and invent (false positives) it; the same for the denominator (P0)."""

    rate: float = 0.20
    miss: float = 0.35
    invent: float = 0.04
    metric_rate: float = 0.75
    metric_miss: float = 0.05
    metric_invent: float = 0.10


@dataclass(frozen=True)
class Design:
    frame: tuple[int, ...] = (2834,)  # papers per stratum
    sample: tuple[int, ...] = (300,)  # human-reviewed papers per stratum
    rules: tuple[Rules, ...] = (Rules(),)  # per stratum


@dataclass
class Outcome:
    truth: np.ndarray
    ppi: Interval
    human: Interval
    automated: Interval
    pooled: Interval | None = None  # stratified sample estimated as if simple random (wrong)
    extra: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict[str, float]:
        def cover(i: Interval) -> float:
            return float(np.mean((i.low <= self.truth) & (self.truth <= i.high)))

        out = {"replications": float(self.truth.shape[0]),
               "ppi_coverage": cover(self.ppi), "human_coverage": cover(self.human),
               "automated_coverage": cover(self.automated),
               "ppi_half_width": float(np.mean(self.ppi.half_width)),
               "human_half_width": float(np.mean(self.human.half_width)),
               "ppi_bias": float(np.mean(self.ppi.estimate - self.truth)),
               "human_bias": float(np.mean(self.human.estimate - self.truth)),
               "automated_bias": float(np.mean(self.automated.estimate - self.truth))}
        if self.pooled is not None:
            out["pooled_coverage"] = cover(self.pooled)
            out["pooled_bias"] = float(np.mean(self.pooled.estimate - self.truth))
        return out


def _flip(rng: np.random.Generator, truth: np.ndarray, miss: float, invent: float) -> np.ndarray:
    u = rng.random(truth.shape)
    return np.where(truth, u >= miss, u < invent)


def _stratum(rng: np.random.Generator, reps: int, size: int, n: int,
             r: Rules) -> tuple[Stratum, np.ndarray, np.ndarray]:
    """One stratum's corpora and samples; also its true numerator and denominator counts."""
    d = rng.random((reps, size)) < r.metric_rate
    y = d & (rng.random((reps, size)) < r.rate)
    dhat = _flip(rng, d, r.metric_miss, r.metric_invent)
    yhat = dhat & _flip(rng, y, r.miss, r.invent)
    picked = np.argsort(rng.random((reps, size)), axis=1)[:, :n]  # a simple random sample per replication
    take = lambda x: np.take_along_axis(x, picked, axis=1).astype(float)  # noqa: E731
    s = Stratum(take(y), take(yhat), yhat.astype(float), take(d), take(dhat), dhat.astype(float))
    return s, (d & y).sum(1), d.sum(1)


def simulate(design: Design = Design(), reps: int = 400, seed: int = 2023, confidence: float = 0.95) -> Outcome:
    """Draw `reps` corpora and samples; estimate each statistic three ways."""
    rng = np.random.default_rng(seed)
    strata: list[Stratum] = []
    num: Any = 0
    den: Any = 0
    for size, n, r in zip(design.frame, design.sample, design.rules):
        s, k, m = _stratum(rng, reps, size, n, r)
        strata.append(s)
        num, den = num + k, den + m
    truth = num / den
    pooled = None
    if len(strata) > 1:  # the same sample read as one simple random sample: weights ignored
        cat = lambda name: np.concatenate([getattr(s, name) for s in strata], axis=-1)  # noqa: E731
        one = Stratum(cat("y"), cat("yhat"), cat("yhat_all"), cat("d"), cat("dhat"), cat("dhat_all"))
        pooled = ppi_ratio([one], confidence)
    return Outcome(truth, ppi_ratio(strata, confidence), classical_ratio(strata, confidence),
                   automated_ratio(strata, confidence), pooled)
