"""Development-set accuracy of the shipped rule files, side by side.

Scores patterns/rouge/rouge.toml (Table 5 as published) and patterns/rouge/rouge-precise.toml on the
hand-labelled development gold set gold/papers/dev.jsonl with every score GOLD.md lists
(the same numbers `review evaluate papers` prints), one column per rule file. The PDFs
are read once, exactly as `review check` reads them, and labelled by each rule file.

The PDFs are not in git. Fetch them first (needs the network, or local copies):

    python gold/papers/fetch.py
    python gold/papers/fetch.py --offline --git-dir <mirror of SVAIGBA/paper_list> --local ../shared/fixtures/pdfs

Then, offline:

    .venv/bin/python benchmarks/bench_gold_papers.py [--gold FILE] [--rules FILE ...] [--json]
    .venv/bin/python benchmarks/bench_gold_papers.py --disagreements P3   # development part only

Development and holdout: the gold ids, sorted, are split once with `random.Random(23)`
into a holdout third and a development two thirds (fixed before the P2/P3 attachment rules
were written). Rules are tuned by reading disagreements of the development part only
(`--disagreements` never prints holdout items); every score is printed for all, dev and
holdout, so a gain that does not generalize shows as a gap between the last two.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from review.compute import load_catalog  # noqa: E402
from review.errors import ReviewError  # noqa: E402
from review.evaluate.gold import GoldFile, read_gold  # noqa: E402
from review.evaluate.papers import evaluate, read_texts  # noqa: E402
from review.rules import load_ruleset  # noqa: E402

DEFAULT_RULES = [ROOT / "patterns" / "rouge" / "rouge.toml", ROOT / "patterns" / "rouge" / "rouge-precise.toml"]
HEADLINE = ["P0.precision", "P0.recall", "P0.f1", "P0.accuracy",
            "P1.listed.precision", "P1.listed.recall", "P1.precision", "P1.recall", "P1.f1", "P1.exact",
            "P2.precision", "P2.recall", "P2.f1", "P2.exact",
            "P3.precision", "P3.recall", "P3.f1", "P3.exact",
            "P4.precision", "P4.recall", "P4.f1", "P4.exact",
            "code_urls.precision", "code_urls.recall", "code_urls.f1", "code_urls.exact"]


HOLDOUT_SEED = 23
HOLDOUT_SHARE = 1 / 3
PARTS = ("all", "dev", "holdout")


def holdout_ids(ids: list[str], seed: int = HOLDOUT_SEED, share: float = HOLDOUT_SHARE) -> set[str]:
    """The held-out gold items: a seeded sample of the sorted ids, fixed before tuning."""
    names = sorted(ids)
    return set(random.Random(seed).sample(names, round(len(names) * share)))


def part(gold: GoldFile, name: str, held: set[str]) -> GoldFile:
    if name == "all":
        return gold
    keep = (lambda p: p.id in held) if name == "holdout" else (lambda p: p.id not in held)
    return dataclasses.replace(gold, papers=tuple(p for p in gold.papers if keep(p)))


def main() -> int:
    parser = argparse.ArgumentParser(description="Development-set scores of rule files, side by side.")
    parser.add_argument("--gold", type=Path, default=ROOT / "gold" / "papers" / "dev.jsonl")
    parser.add_argument("--rules", type=Path, action="append", help="rule file (repeatable; default: both shipped)")
    parser.add_argument("--json", action="store_true", help="print every metric of every rule file as JSON")
    parser.add_argument("--disagreements", metavar="QUESTION",
                        help="also print the development part's disagreements on P0..P4 or code_urls, with evidence")
    args = parser.parse_args()
    rules = args.rules or DEFAULT_RULES
    catalog = load_catalog(ROOT / "patterns" / "rouge" / "packages.toml")
    try:
        gold = read_gold(args.gold, catalog.packages)
    except ReviewError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        print("The development PDFs are fetched by: python gold/papers/fetch.py (see the docstring of this "
              "script for an offline variant).", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    texts = read_texts(gold)
    read_s = time.perf_counter() - t0
    held = holdout_ids([p.id for p in gold.papers])
    results = []
    for path in rules:
        ruleset = load_ruleset(path)
        t0 = time.perf_counter()
        evaluate(gold, texts, ruleset)
        secs = time.perf_counter() - t0
        for name in PARTS:
            results.append((ruleset, name, evaluate(part(gold, name, held), texts, ruleset), secs))
    if args.json:
        print(json.dumps({f"{rs.name}/{name}": {"sha256": rs.sha256, "metrics": ev.metrics(),
                                                "scores": ev.scores.as_dict()}
                          for rs, name, ev, _ in results}, indent=2))
        return 0
    s = results[0][2].scores
    print(f"{args.gold.relative_to(ROOT) if args.gold.is_relative_to(ROOT) else args.gold}: {s.items} papers, "
          f"{s.computing} compute ROUGE ({len(gold.papers) - len(held)} development, {len(held)} holdout, "
          f"seed {HOLDOUT_SEED}); texts read in {read_s:.1f} s")
    names = [f"{rs.name}/{name}" for rs, name, _, _ in results]
    width = max(12, *(len(n) for n in names))
    print(f"{'score':32}" + "".join(f"{n:>{width + 2}}" for n in names))
    metrics = [ev.metrics() for _, _, ev, _ in results]
    for key in HEADLINE:
        print(f"{key:32}" + "".join(f"{_fmt(m.get(key)):>{width + 2}}" for m in metrics))
    print("per label, precision/recall:")
    labels = sorted({k.rsplit(".", 1)[0] for m in metrics for k in m
                     if k.count(".") >= 2 and k.split(".")[0] in ("P2", "P3", "P4")})
    for label in labels:
        cells = "".join(f"{_fmt(m.get(label + '.precision')) + '/' + _fmt(m.get(label + '.recall')):>{width + 2}}"
                        for m in metrics)
        print(f"  {label:30}{cells}")
    print(f"{'disagreements':32}" + "".join(f"{len(ev.scores.disagreements):>{width + 2}}"
                                            for _, _, ev, _ in results))
    print(f"{'labelling seconds (all)':32}" + "".join(f"{secs:>{width + 2}.2f}" for _, _, _, secs in results))
    if args.disagreements:
        for rs, name, ev, _ in results:
            if name == "dev" and rs is results[-1][0]:
                _print_disagreements(ev, args.disagreements)
    return 0


def _print_disagreements(ev, question: str) -> None:  # type: ignore[no-untyped-def]
    print(f"\n{ev.rules}: development disagreements on {question}")
    for d in ev.scores.disagreements:
        if d.question != question:
            continue
        print(f"- {d.item}: expected {d.expected} proposed {d.proposed} (missing {d.missing}, extra {d.extra})")
        if d.expected_evidence:
            print(f"    gold: {str(d.expected_evidence)[:300]}")
        for e in d.evidence:
            tag = f"REJECTED {e['reason']}" if "reason" in e else f"attached {e.get('attached', '-')}"
            print(f"    [{e['label']}] {tag}\n      {e['snippet']}")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


if __name__ == "__main__":
    sys.exit(main())
