"""Table 1: the reference under the paper's configurations, as deltas from the baseline.

Every configuration is a row of `[[sensitivity]]` in the metric's harness.toml: options
passed to the reference, the measure read (F1 or recall), the sentence splitting the
specimen is given in, and the paper's published R1 delta to set beside ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from review.packages.harness import Harness, run_reference
from review.packages.specimen import Pair
from review.packages.venvs import Venv


@dataclass
class Row:
    name: str
    options: list[str] | dict
    measure: str
    splitting: str
    means: dict[str, float]  # score -> mean, points
    deltas: dict[str, float]  # score -> mean minus the baseline's, points
    published: float | None


def _means(per_pair: list[dict[str, dict[str, float]]], scores: Sequence[str], measure: str) -> dict[str, float]:
    return {s: 100 * sum(p[s][measure] for p in per_pair) / len(per_pair) for s in scores}


def run_sensitivity(h: Harness, venv: Venv, pairs: Sequence[Pair]) -> list[Row]:
    """Each configuration's mean scores and their distance from the first (the baseline)."""
    rows: list[Row] = []
    base_runs: dict[str, dict[str, float]] = {}
    for conf in h.sensitivity:
        splitting = conf.get("splitting", "explicit")
        measure = conf.get("measure", h.measures[-1])
        run = run_reference(h, venv, pairs, conf["options"], splitting=splitting)
        means = _means(run.per_pair, h.scores, measure)
        if not rows:
            base_runs = {m: _means(run.per_pair, h.scores, m) for m in h.measures}
        base = base_runs[conf.get("base_measure", h.measures[-1])]
        rows.append(Row(conf["name"], conf["options"], measure, splitting, means,
                        {s: means[s] - base[s] for s in h.scores}, conf.get("published")))
    return rows
