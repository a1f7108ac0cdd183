"""Code labels on the development gold set: how right the scan is on real repositories.

    .venv/bin/python benchmarks/bench_gold_code.py --root CHECKOUTS [--gold gold/code/dev.jsonl] [--json]
        [--split all|dev|holdout|both] [--holdout-seed 12] [--disagreements]

Runs `review evaluate code` on gold/code/dev.jsonl (51 real research repositories labelled
by hand, gold/code/README.md) and prints the figures issue 12 targets: packages_used exact
on >= 90% of repositories, C2 agreement >= 85%; plus precision/recall/F1 of packages_used
and packages_present, the C2 table and the scan speed on these checkouts. Offline once
the checkouts exist; without them it says how to fetch them and exits 2. Figures only;
nothing is asserted.

Held out: rules tuned while looking at a repository's disagreements are not evidence of how
the scan does on repositories nobody has seen. `--split both` scores a "dev" part and a
"holdout" part separately: the holdout is a third of the gold repositories drawn with
`random.Random(seed).sample` over the sorted repository names (seed 12, chosen before any
disagreement was read), the dev part is the rest. A gold file whose lines say
`"split": "holdout"` (gold/code/dev.jsonl since issue 32: 18 repositories of batch 2, drawn
before tuning) is split by those marks instead, exactly as `review evaluate code` splits it.
Develop with `--split dev --disagreements`; read the holdout's figures, never its
disagreements.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from review.codebases.catalog import load_catalog  # noqa: E402
from review.evaluate.code import (HOLDOUT, CodeEvaluation, evaluate, locate_checkouts, part_of,  # noqa: E402
                                  scanner, score, vocabulary)
from review.evaluate.code_gold import CodeGoldFile, read_code_gold  # noqa: E402
from review.settings import load_settings  # noqa: E402

TARGETS = {"packages_used.exact": 0.90, "eval_reproducible.agreement": 0.85}
HOLDOUT_SEED = 12
HOLDOUT_SHARE = 1 / 3


def holdout(repos: list[str], seed: int = HOLDOUT_SEED, share: float = HOLDOUT_SHARE) -> set[str]:
    """The held-out repositories: a seeded sample of the sorted names, fixed before development."""
    names = sorted(repos)
    return set(random.Random(seed).sample(names, round(len(names) * share)))


def split(gold: CodeGoldFile, part: str, seed: int) -> CodeGoldFile:
    if part == "all":
        return gold
    marked = {r.repo for r in gold.repos if part_of(r) == HOLDOUT}
    held = marked or holdout([r.repo for r in gold.repos], seed)
    keep = tuple(r for r in gold.repos if (r.repo in held) == (part == "holdout"))
    return replace(gold, repos=keep)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=os.environ.get("REVIEW_GOLD_CODE_ROOT"),
                    help="folder of owner+name checkouts (default: $REVIEW_GOLD_CODE_ROOT)")
    ap.add_argument("--gold", type=Path, default=ROOT / "gold" / "code" / "dev.jsonl")
    ap.add_argument("--json", action="store_true", help="print the whole evaluation as JSON")
    ap.add_argument("--split", choices=("all", "dev", "holdout", "both"), default="both",
                    help="which part of the gold set to score (both: dev and holdout, each on its own, then all)")
    ap.add_argument("--holdout-seed", type=int, default=HOLDOUT_SEED)
    ap.add_argument("--disagreements", action="store_true", help="list each disagreement (not with holdout)")
    args = ap.parse_args(argv)
    if args.root is None or not Path(args.root).is_dir():
        print("no checkouts: fetch them once, then rerun with --root:\n"
              "    python gold/code/fetch.py --out ~/gold-checkouts                  # clones from GitHub\n"
              "    python gold/code/fetch.py --out ~/gold-checkouts --mirror DIR     # from bare git dirs\n"
              f"    .venv/bin/python {Path(__file__).relative_to(ROOT)} --root ~/gold-checkouts", file=sys.stderr)
        return 2
    settings = load_settings(None)
    catalog = load_catalog(settings.code.catalog or None)
    gold = read_code_gold(args.gold, vocabulary(settings, catalog))
    checkouts = locate_checkouts(gold, Path(args.root).expanduser().resolve())
    scan = scanner(settings, catalog)
    parts = ("dev", "holdout", "all") if args.split == "both" else (args.split,)
    results, cpu = {}, {}
    for part in parts:
        sub = split(gold, part, args.holdout_seed)
        c0 = time.process_time()
        if part == "all" and "dev" in results:  # no need to scan twice
            result = _merge(sub, [results["dev"], results["holdout"]])
            cpu[part] = cpu["dev"] + cpu["holdout"]
        else:
            result = evaluate(sub, checkouts, scan)
            cpu[part] = time.process_time() - c0
        results[part] = result
        if not args.json:
            marked = any(part_of(r) == HOLDOUT for r in gold.repos)
            how = " (split marks of the gold file)" if marked else f" (seed {args.holdout_seed})"
            print(f"== {part}" + (how if part != "all" else ""))
            report(result, cpu[part])
            if args.disagreements and part != "holdout":
                print_disagreements(result)
    if args.json:
        print(json.dumps({k: v.as_dict() for k, v in results.items()}, indent=2))
    return 0


def _merge(gold: CodeGoldFile, parts: list[CodeEvaluation]) -> CodeEvaluation:
    """Score the whole set from the parts' proposals (each repository scanned once)."""
    by_repo = {r.repo: r for p in parts for r in p.results}

    result = score(gold, {repo: r.proposal for repo, r in by_repo.items()})
    result.results = [by_repo[e.repo] for e in gold.repos]
    result.signature = parts[0].signature
    result.seconds = sum(p.seconds for p in parts)
    return result


def print_disagreements(result: CodeEvaluation) -> None:
    for d in result.disagreements:
        print(f"- {d.repo} {d.question}: expected {d.expected} proposed {d.proposed}")
        for e in d.evidence[:6]:
            print(f"    {json.dumps(e, ensure_ascii=False)[:300]}")


def report(result: CodeEvaluation, cpu_seconds: float = 0.0) -> None:
    """The figures; the speed in CPU time too, since wall time on a shared machine measures the neighbours."""
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
    if cpu_seconds:
        print(f"scan speed in CPU time: {result.repositories / cpu_seconds * 60:.0f} repositories/min "
              f"({cpu_seconds:.1f} CPU s in this process; the figure on one free core)")
    print(f"disagreements: {len(result.disagreements)} "
          f"(review evaluate code --gold {result.gold} --root ... lists them with evidence)")


def _f(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


if __name__ == "__main__":
    sys.exit(main())
