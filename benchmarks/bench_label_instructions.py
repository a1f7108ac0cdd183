"""Labelling cost in CPU instructions, for comparisons that a noisy machine does not blur.

bench_label.py measures CPU seconds, which drift by 15-40% between runs on a shared
machine: a 5% change cannot be seen there. Instructions counted by valgrind's callgrind
are the same from run to run for the same code and texts, whatever else the machine does.
This script labels the same texts twice under callgrind, once with every text and once
with none, and prints the difference: the instructions spent on the texts alone (rule file
loading, imports and reading the texts cancel out).

    .venv/bin/python benchmarks/bench_label_instructions.py --rules patterns/rouge/rouge-precise.toml
    .venv/bin/python benchmarks/bench_label_instructions.py --texts gold          # the development gold papers
    .venv/bin/python benchmarks/bench_label_instructions.py --no-attach           # without the attachment judge
    # another version of the code on the same texts, e.g. before the judge:
    mkdir -p /tmp/before && git archive 56c779f^ | tar -x -C /tmp/before
    .venv/bin/python benchmarks/bench_label_instructions.py --code /tmp/before --rules /tmp/before/patterns/rouge/rouge-precise.toml

The texts are always made by this checkout (so every `--code` labels the same ones).
`--texts corpus` (the default) takes the first `--papers` papers about ROUGE of
bench_label.py's generated corpus (the other 95% leave at the preliminary search and
cost about the same in every version); `--texts gold` the development gold papers
(gold/papers/dev.jsonl; fetch the PDFs first, see bench_gold_papers.py). Needs valgrind;
a run takes a few minutes (callgrind runs Python about 50x slower).

Figures (2026-12-02; instructions spent on the texts alone, 10^9; the ratio is to the code
and rule file before the judge):

    code, rule file                        60 corpus ROUGE papers   114 gold papers
    before the judge (56c779f^), precise   1.945                    2.463
    main at 247a5c9, precise               3.637 (1.87x)            -
    main at 75ba759, precise               3.258 (1.68x)            3.291 (1.34x)
    main at 75ba759, precise --no-attach   2.040 (1.05x)            2.871 (1.17x)
    before the judge, faithful             1.667                    -
    main at 75ba759, faithful              1.228 (0.74x)            -
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default=str(ROOT / "patterns" / "rouge" / "rouge-precise.toml"))
    ap.add_argument("--texts", choices=["corpus", "gold"], default="corpus")
    ap.add_argument("--papers", type=int, default=60, help="ROUGE papers of the generated corpus (--texts corpus)")
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose review package labels (default: this one)")
    ap.add_argument("--no-attach", action="store_true", help="drop every rule's attachment policy (the judge's share)")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return label(args.child, args.count or 0, args.code, args.rules, args.no_attach)
    if shutil.which("valgrind") is None:
        print("error: valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = Path(tmp) / "texts.pickle"
        try:
            texts = read_texts(args.texts, args.papers)
        except Exception as exc:  # e.g. the gold PDFs are not fetched
            print(f"error: cannot read the {args.texts} texts: {exc}", file=sys.stderr)
            if args.texts == "gold":
                print("hint: fetch the PDFs first (python gold/papers/fetch.py; see bench_gold_papers.py)", file=sys.stderr)
            return 1
        texts_file.write_bytes(pickle.dumps(texts))
        counts = [instructions(texts_file, n, args) for n in (len(texts), 0)]
    spent = counts[0] - counts[1]
    print(f"code: {args.code}; rules: {args.rules}{' (--no-attach)' if args.no_attach else ''}")
    print(f"texts: {len(texts)} ({args.texts}), {sum(map(len, texts)) / 1e6:.1f} M characters")
    print(f"instructions on the texts: {spent / 1e9:.3f} x 10^9 ({spent / len(texts) / 1e6:.1f} M per text); "
          f"run with all of them {counts[0] / 1e9:.3f} x 10^9, with none {counts[1] / 1e9:.3f} x 10^9")
    return 0


def read_texts(kind: str, papers: int) -> list[str]:
    sys.path.insert(0, str(ROOT))
    if kind == "gold":
        from review.compute import load_catalog
        from review.evaluate.gold import read_gold
        from review.evaluate.papers import read_texts as read_gold_texts

        gold = read_gold(ROOT / "gold" / "papers" / "dev.jsonl", load_catalog(ROOT / "patterns" / "rouge" / "packages.toml").packages)
        return list(read_gold_texts(gold).values())
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_label import make_corpus

    return [t for t in make_corpus(10_000) if "rouge" in t.lower()][:papers]


def instructions(texts_file: Path, count: int, args: argparse.Namespace) -> int:
    """Instructions of one child run under callgrind that labels the first `count` texts."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
               "--child", str(texts_file), "--count", str(count), "--code", str(args.code), "--rules", args.rules,
               *(["--no-attach"] if args.no_attach else [])]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"error: the run under valgrind failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(found.group(1))


def label(texts_file: Path, count: int, code: Path, rules: str, no_attach: bool) -> int:
    sys.path.insert(0, str(code))
    from review.rules import Engine, label_scan, load_ruleset

    ruleset = load_ruleset(rules)
    if no_attach and ruleset.rules and hasattr(ruleset.rules[0], "attach"):  # code before the judge has none
        ruleset = dataclasses.replace(ruleset, rules=[dataclasses.replace(r, attach=None) for r in ruleset.rules])
    engine = Engine(ruleset)
    texts = pickle.loads(texts_file.read_bytes())
    for text in texts[:count]:
        label_scan(engine.scan(text), ruleset)
    return 0


if __name__ == "__main__":
    sys.exit(main())
