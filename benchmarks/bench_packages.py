"""`review packages` speed: the reference and the candidates on N pairs, and the specimen it used.

    .venv/bin/python benchmarks/bench_packages.py [--pairs 10000] [--package NAME ...] [--write FILE.jsonl]

The specimen is real English from the ACL Anthology metadata in ../shared/fixtures (every
<abstract>): each abstract of at least five sentences gives one pair, its first three
sentences as the hypothesis (Lead-3) and the rest as the reference; pairs are repeated in
order to reach --pairs (the scores of a repeat are the same, the work is not). Times the
reference's two grid runs (plain, -m) and each candidate (venvs already cached: build them
with one `review packages test` first), and prints seconds, pairs per second and the peak
memory of the children (ru_maxrss). `--write` keeps the specimen for `review packages`.
Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures"

from review.metric import load_metric  # noqa: E402
from review.packages import harness, venvs  # noqa: E402
from review.packages.specimen import Pair, specimen_hash, split_sentences  # noqa: E402


def anthology_pairs() -> list[Pair]:
    """(rest of the abstract, its Lead-3) from every abstract in the fixture anthology files."""
    pairs = []
    for folder in ("acl-anthology", "acl-anthology-oldstyle"):
        for f in sorted((FIXTURES / folder).rglob("*.xml")):
            for i, m in enumerate(re.finditer(r"<abstract>(.*?)</abstract>", f.read_text(encoding="utf-8"), re.S)):
                sents = split_sentences(re.sub(r"<[^>]+>", "", m.group(1)))
                if len(sents) >= 5:
                    pairs.append(Pair(f"{f.stem}-{i}", tuple(sents[3:]), tuple(sents[:3])))
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=10_000)
    ap.add_argument("--package", action="append", default=[])
    ap.add_argument("--write", type=Path)
    args = ap.parse_args()
    base = anthology_pairs()
    pairs = [Pair(f"{base[k % len(base)].id}#{k // len(base)}", base[k % len(base)].reference,
                  base[k % len(base)].hypothesis) for k in range(args.pairs)]
    if args.write:
        args.write.write_text("".join(json.dumps(p.as_dict()) + "\n" for p in base))
        print(f"wrote {len(base)} distinct pairs to {args.write}")
    m = load_metric("rouge")
    h = harness.load_harness(m.folder, m.id)
    cache = venvs.default_cache()
    print(f"specimen: {len(pairs)} pairs ({len(base)} distinct), sha256 {specimen_hash(pairs)[:12]}")
    t = time.perf_counter()
    ref_venv = harness.reference_venv(h, cache)
    ref = harness.reference_variants(h, ref_venv, pairs)
    total = ref_secs = time.perf_counter() - t
    print(f"reference ROUGE-1.5.5 (plain + -m): {ref_secs:.1f}s, {2 * len(pairs) / ref_secs:.0f} pair-runs/s")
    chosen = [h.candidate(n) for n in args.package] or [c for c in h.candidates if c.adapter != "bz_pyrouge"]
    for c in chosen:
        t = time.perf_counter()
        run = harness.run_candidate(h, c, pairs, cache)
        secs = time.perf_counter() - t
        total += secs
        share = harness.compare(h, ref, run.per_pair).share if not run.reason else float("nan")
        print(f"{c.name:18} {run.version:8} {secs:7.1f}s  {2 * len(pairs) / secs:7.0f} pair-runs/s  "
              f"differing {100 * share:5.1f}%  {run.reason}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"total {total:.1f}s for the reference and {len(chosen)} packages; peak memory: children {peak:.0f} MB, "
          f"this process {own:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
