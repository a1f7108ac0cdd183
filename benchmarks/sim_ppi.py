"""Prediction-powered estimates on simulated corpora with known truth: coverage, width, bias.

Each scenario draws `--reps` corpora (2,834 papers, the size of the Rogue Scores corpus),
rules that err at the stated rates, and a human sample; it prints, per estimator, how often
the 95% interval covers the corpus's true share, the mean half-width and the mean bias.
Not part of the test run (tests/test_estimate_ppi.py checks the thresholds on 400 seeds).

    .venv/bin/python benchmarks/sim_ppi.py
    .venv/bin/python benchmarks/sim_ppi.py --reps 2000 --seed 1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from review.estimate import simulate as sim  # noqa: E402

SCENARIOS = {
    "srs n=300, rules miss 35% / invent 4%": sim.Design(),
    "srs n=100": sim.Design(sample=(100,)),
    "srs n=50": sim.Design(sample=(50,)),
    "good rules (miss 10% / invent 2%), n=100": sim.Design(sample=(100,), rules=(sim.Rules(miss=0.1, invent=0.02),)),
    "stratified 3 x 100 from 2000/600/234": sim.Design(
        frame=(2000, 600, 234), sample=(100, 100, 100),
        rules=(sim.Rules(rate=0.1), sim.Rules(rate=0.3, miss=0.2), sim.Rules(rate=0.5, miss=0.5, invent=0.1))),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=14)
    args = ap.parse_args()
    print(f"{'scenario':44} {'estimator':16} {'coverage':>8} {'±width':>8} {'bias':>8}")
    for title, design in SCENARIOS.items():
        for tuned in (False, True):
            start = time.perf_counter()
            original = sim.ppi_ratio
            sim.ppi_ratio = lambda strata, c=0.95: original(strata, c, tune=tuned)  # noqa: E731
            try:
                out = sim.simulate(design, reps=args.reps, seed=args.seed).summary()
            finally:
                sim.ppi_ratio = original
            took = time.perf_counter() - start
            label = "ppi++ (tuned)" if tuned else "ppi"
            print(f"{title:44} {label:16} {out['ppi_coverage']:8.3f} {out['ppi_half_width']:8.4f} {out['ppi_bias']:+8.4f}"
                  f"   ({took:.2f} s)")
            if tuned:
                continue
            print(f"{'':44} {'human only':16} {out['human_coverage']:8.3f} {out['human_half_width']:8.4f} "
                  f"{out['human_bias']:+8.4f}")
            print(f"{'':44} {'automated only':16} {out['automated_coverage']:8.3f} {'':8} {out['automated_bias']:+8.4f}")
            if "pooled_coverage" in out:
                print(f"{'':44} {'pooled as srs':16} {out['pooled_coverage']:8.3f} {'':8} {out['pooled_bias']:+8.4f}")


if __name__ == "__main__":
    main()
