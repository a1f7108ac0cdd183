"""`review packages` speed: the reference and the candidates on N pairs, and the specimen it used.

    .venv/bin/python benchmarks/bench_packages.py [--pairs 10000] [--package NAME ...] [--workers 2] [--write FILE.jsonl]

The specimen is real English from the ACL Anthology metadata in ../shared/fixtures (every
<abstract>): each abstract of at least five sentences gives one pair, its first three
sentences as the hypothesis (Lead-3) and the rest as the reference; pairs are repeated in
order to reach --pairs (the scores of a repeat are the same, the work is not). Times the
reference's two grid runs (plain, -m) and each candidate (venvs already cached: build them
with one `review packages test` first), `--workers` jobs at a time (each job its own
processes, so the two cores both work), and prints each job's wall seconds, the total wall
time, and peak memory: the largest sum, sampled every 0.2 s, of the resident memory of every
process below this one (/proc), beside the largest single child (ru_maxrss). `--write`
keeps the specimen for `review packages`. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import re
import os
import resource
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# ../shared/fixtures beside the checkout (a git worktree one level deeper finds it one further up)
FIXTURES = next((p / "shared" / "fixtures" for p in ROOT.parents if (p / "shared" / "fixtures").is_dir()),
                ROOT.parent / "shared" / "fixtures")

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


def _descendants_rss_mb() -> float:
    """Resident memory (MB) of every process below this one, read from /proc."""
    kids: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
                fields = stat[stat.rindex(")") + 2:].split()
            except OSError:
                continue
            kids.setdefault(int(fields[1]), []).append(int(d))
            rss[int(d)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    todo, total = list(kids.get(os.getpid(), [])), 0
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(kids.get(pid, []))
    return total / 2**20


class PeakSampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak, self.done = 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            self.peak = max(self.peak, _descendants_rss_mb())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=10_000)
    ap.add_argument("--package", action="append", default=[])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--write", type=Path)
    args = ap.parse_args()
    base = anthology_pairs()
    if not base:
        sys.exit(f"no abstracts under {FIXTURES}")
    pairs = [Pair(f"{base[k % len(base)].id}#{k // len(base)}", base[k % len(base)].reference,
                  base[k % len(base)].hypothesis) for k in range(args.pairs)]
    if args.write:
        args.write.write_text("".join(json.dumps(p.as_dict()) + "\n" for p in base))
        print(f"wrote {len(base)} distinct pairs to {args.write}")
    m = load_metric("rouge")
    h = harness.load_harness(m.folder, m.id)
    cache = venvs.default_cache()
    print(f"specimen: {len(pairs)} pairs ({len(base)} distinct), sha256 {specimen_hash(pairs)[:12]}; "
          f"{args.workers} jobs at a time", flush=True)
    ref_venv = harness.reference_venv(h, cache)
    harness.run_reference(h, ref_venv, pairs[:1], h.reference.get("options", []))  # WordNet DB, script mode
    chosen = [h.candidate(n) for n in args.package] or list(h.candidates)
    base_opts = list(h.reference.get("options", []))

    def reference(variant: str):
        t = time.perf_counter()
        run = harness.run_reference(h, ref_venv, pairs, base_opts + list(h.reference["variants"][variant]))
        return variant, run.per_pair, time.perf_counter() - t

    def candidate(c):
        t = time.perf_counter()
        run = harness.run_candidate(h, c, pairs, cache)
        return c, run, time.perf_counter() - t

    sampler = PeakSampler()
    sampler.start()
    start = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        refs = [pool.submit(reference, v) for v in h.reference["variants"]]
        cands = [pool.submit(candidate, c) for c in chosen]
        ref = {}
        for f in refs:
            variant, per_pair, secs = f.result()
            ref[variant] = per_pair
            print(f"reference ROUGE-1.5.5 {variant:5} {secs:7.1f}s  {len(pairs) / secs:7.0f} pairs/s", flush=True)
        for f in cands:
            c, run, secs = f.result()
            share = harness.compare(h, ref, run.per_pair).share if not run.reason else float("nan")
            print(f"{c.name:22} {run.version:8} {secs:7.1f}s  {2 * len(pairs) / secs:7.0f} pair-runs/s  "
                  f"differing {100 * share:5.1f}%  {run.reason}", flush=True)
    total = time.perf_counter() - start
    sampler.done.set()
    sampler.join()
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"total {total:.1f}s wall for the reference and {len(chosen)} packages; peak memory: all children at once "
          f"{sampler.peak:.0f} MB (largest single child {largest:.0f} MB), this process {own:.0f} MB")


if __name__ == "__main__":
    sys.exit(main())
