"""Code labels on the development gold set: how right the scan is on real repositories.

    .venv/bin/python benchmarks/bench_gold_code.py --root CHECKOUTS [--gold gold/code/dev.jsonl] [--json]

Runs `review evaluate code` on gold/code/dev.jsonl (51 real research repositories labelled
by hand, gold/code/README.md) and prints the figures issue 12 targets: packages_used exact
on >= 90% of repositories, C2 agreement >= 85%; plus precision/recall/F1 of packages_used
and packages_present, the C2 table and the scan speed on these checkouts. Offline once
the checkouts exist; without them it says how to fetch them and exits 2. Figures only;
nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from review.evaluate.code import CodeEvaluation, run  # noqa: E402
from review.settings import load_settings  # noqa: E402

TARGETS = {"packages_used.exact": 0.90, "eval_reproducible.agreement": 0.85}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=os.environ.get("REVIEW_GOLD_CODE_ROOT"),
                    help="folder of owner+name checkouts (default: $REVIEW_GOLD_CODE_ROOT)")
    ap.add_argument("--gold", type=Path, default=ROOT / "gold" / "code" / "dev.jsonl")
    ap.add_argument("--json", action="store_true", help="print the whole evaluation as JSON")
    args = ap.parse_args(argv)
    if args.root is None or not Path(args.root).is_dir():
        print("no checkouts: fetch them once, then rerun with --root:\n"
              "    python gold/code/fetch.py --out ~/gold-checkouts                  # clones from GitHub\n"
              "    python gold/code/fetch.py --out ~/gold-checkouts --mirror DIR     # from bare git dirs\n"
              f"    .venv/bin/python {Path(__file__).relative_to(ROOT)} --root ~/gold-checkouts", file=sys.stderr)
        return 2
    result = run(load_settings(None), args.gold, args.root)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
    else:
        report(result)
    return 0


def report(result: CodeEvaluation) -> None:
    used, present, c2 = result.sets["packages_used"], result.sets["packages_present"], result.verdict
    metrics = result.metrics()
    print(f"gold: {result.gold} ({result.repositories} repositories, {len(result.failed)} scans failed)")
    print(f"scanner: {result.signature}")
    for name, s in (("packages_used", used), ("packages_present", present)):
        o = s.overall
        print(f"{name:17s} exact {s.exact:2d}/{s.items} = {_pct(s.exact_share)}   "
              f"precision {_f(o.precision)}  recall {_f(o.recall)}  F1 {_f(o.f1)}   (tp {o.tp}, fp {o.fp}, fn {o.fn})")
    counts = c2.counts
    print(f"eval_reproducible agreement {c2.agreed:2d}/{c2.items} = {_pct(c2.agreement)}   precision "
          f"{_f(counts.precision)}  recall {_f(counts.recall)}  F1 {_f(counts.f1)}   proposed unknown {c2.unknown}")
    for expected in (True, False):
        row = "  ".join(f"{p} {c2.table[(expected, p)]:2d}" for p in ("true", "false", "unknown"))
        print(f"  expected {str(expected).lower():5s}: proposed {row}")
    print("targets (issue 12):")
    for name, target in TARGETS.items():
        value = metrics[name]
        status = "met" if value is not None and value >= target else "not met"
        print(f"  {name} >= {target:.0%}: {_pct(value)} ({status})")
    scan_seconds = sum(r.seconds for r in result.results)
    if scan_seconds:
        print(f"scan speed on these checkouts: {result.repositories / scan_seconds * 60:.0f} repositories/min "
              f"({scan_seconds:.1f} s scanning, {result.seconds:.1f} s in all)")
    print(f"disagreements: {len(result.disagreements)} "
          f"(review evaluate code --gold {result.gold} --root ... lists them with evidence)")


def _f(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


if __name__ == "__main__":
    sys.exit(main())
